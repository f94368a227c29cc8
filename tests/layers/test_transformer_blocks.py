import numpy as np
import pytest
from keras import ops

import kseq
from testing import run_layer_test

rng = np.random.default_rng(1)
X = rng.normal(size=(2, 5, 8)).astype("float32")
MEMORY = rng.normal(size=(2, 6, 8)).astype("float32")
MEMORY_MASK = np.array([[1] * 6, [1] * 3 + [0] * 3], bool)


# Post-norm runs the same ops as pre-norm in another order: XLA compiles the pre-norm fit.
@pytest.mark.slow
@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_harness(norm_first):
    run_layer_test(
        kseq.layers.TransformerEncoderBlock,
        {"num_heads": 2, "intermediate_dim": 16, "dropout": 0.1, "norm_first": norm_first},
        X, (2, 5, 8), xla=norm_first,
    )


@pytest.mark.slow
@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_harness(norm_first):
    run_layer_test(
        kseq.layers.TransformerDecoderBlock,
        {"num_heads": 2, "intermediate_dim": 16, "dropout": 0.1, "norm_first": norm_first},
        [X, MEMORY], (2, 5, 8), call_kwargs={"memory_mask": MEMORY_MASK}, xla=norm_first,
    )


def test_encoder_padding_invariance():
    block = kseq.layers.TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    padded = np.concatenate([X, rng.normal(size=(2, 3, 8)).astype("float32")], 1)
    mask = np.array([[1] * 5 + [0] * 3] * 2, bool)
    reference = ops.convert_to_numpy(block(X))
    actual = ops.convert_to_numpy(block(padded, padding_mask=mask))
    np.testing.assert_allclose(actual[:, :5], reference, atol=1e-5)


def test_decoder_memory_padding_invariance():
    block = kseq.layers.TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    noisy = MEMORY.copy()
    noisy[1, 3:] = 100.0  # garbage in the padded memory positions
    actual = block(X, noisy, memory_mask=MEMORY_MASK)
    np.testing.assert_allclose(
        ops.convert_to_numpy(actual)[1],
        ops.convert_to_numpy(block(X[1:], MEMORY[1:, :3], memory_mask=np.ones((1, 3), bool)))[0],
        atol=1e-5,
    )


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_steps_reproduce_teacher_forcing(norm_first):
    block = kseq.layers.TransformerDecoderBlock(
        num_heads=2, intermediate_dim=16, norm_first=norm_first
    )
    full, full_weights = block(X, MEMORY, memory_mask=MEMORY_MASK, return_attention_scores=True)
    cross_kv = block.project_memory(MEMORY)
    cache = block.initial_state(batch_size=2, max_length=8)
    steps, weights = [], []
    for t in range(5):
        output, cache, step_weights = block.step(X[:, t], cache, cross_kv, MEMORY_MASK, t)
        assert tuple(cache["key"].shape) == (2, 2, 8, 4)  # [B, H, L, D]
        steps.append(ops.convert_to_numpy(output))
        weights.append(ops.convert_to_numpy(step_weights))
    np.testing.assert_allclose(np.stack(steps, 1), ops.convert_to_numpy(full), atol=1e-5)
    np.testing.assert_allclose(
        np.stack(weights, 2), ops.convert_to_numpy(full_weights), atol=1e-6
    )


def test_bad_input_errors():
    block = kseq.layers.TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    with pytest.raises(ValueError, match="memory_mask.*Received: memory_mask=None"):
        block(X, MEMORY)
    with pytest.raises(ValueError, match="`memory` must have rank 3"):
        block(X, MEMORY[0], memory_mask=MEMORY_MASK)
    with pytest.raises(ValueError, match="divisible by `num_heads`"):
        kseq.layers.TransformerEncoderBlock(num_heads=3, intermediate_dim=16)(X)


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_symbolic_calls_give_the_traced_spec_without_running_call(policy, monkeypatch):
    """Functional models get each block's output spec without tracing `call` (half of
    building or loading a Transformer translator); the spec equals what `call` gives."""
    import keras
    encoder = kseq.layers.TransformerEncoderBlock(num_heads=2, intermediate_dim=16, dtype=policy)
    decoder = kseq.layers.TransformerDecoderBlock(num_heads=2, intermediate_dim=16, dtype=policy)
    source, target = keras.Input((5, 8)), keras.Input((None, 8))
    source_mask = keras.Input((5,), dtype="bool")
    traced = []
    for block in (encoder, decoder):
        monkeypatch.setattr(block, "call", lambda *a, **k: traced.append(a) or a[0])
    memory = encoder(source, padding_mask=source_mask)
    out = decoder(target, memory, memory_mask=source_mask)
    assert traced == []
    model = keras.Model([source, target, source_mask], out)
    monkeypatch.undo()
    x, m = np.ones((2, 3, 8), "float32"), np.ones((2, 5, 8), "float32")
    mask = np.ones((2, 5), bool)
    real = model([m, x, mask])
    assert (tuple(out.shape), out.dtype) == ((None, None, 8), encoder.compute_dtype)
    assert (tuple(real.shape), keras.backend.standardize_dtype(real.dtype)) == (
        (2, 3, 8), encoder.compute_dtype)
    with pytest.raises(ValueError, match="`inputs` must have rank 3"):
        encoder(keras.Input((8,)))
    with pytest.raises(ValueError, match="memory_mask.*Received: memory_mask=None"):
        decoder(target, memory)
