import numpy as np
import pytest
from keras import ops

import kseq
from testing import run_layer_test

MHSA = kseq.layers.MultiHeadSelfAttention
rng = np.random.default_rng(0)
X = rng.normal(size=(3, 5, 8)).astype("float32")
MEMORY = rng.normal(size=(3, 6, 12)).astype("float32")
MEMORY_MASK = np.array([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4], bool)


# XLA compiles the fits whose ops the others' are a subset of: the causal mask, and
# cross attention with a value mask (dropout under XLA: the Transformer block tests).
@pytest.mark.parametrize(
    "init, inputs, kwargs, shape, xla",
    [
        ({"num_heads": 2, "key_dim": 4}, X, {}, (3, 5, 8), False),
        ({"num_heads": 2, "key_dim": 4, "causal": True}, X, {}, (3, 5, 8), True),
        ({"num_heads": 2, "key_dim": 3, "dropout": 0.1}, [X, MEMORY], {}, (3, 5, 8), False),
        ({"num_heads": 1, "key_dim": 4, "output_dim": 6}, [X, MEMORY],
         {"value_mask": MEMORY_MASK}, (3, 5, 6), True),
    ],
)
@pytest.mark.slow
def test_harness(init, inputs, kwargs, shape, xla):
    run_layer_test(MHSA, init, inputs, shape, call_kwargs=kwargs, xla=xla)


def numpy_attention(layer, query, value, mask):
    """Plain NumPy multi-head attention with the layer's own weights."""
    def dense(sub, x):
        kernel, bias = [np.asarray(w) for w in sub.weights]
        return x @ kernel + bias

    heads, depth = layer.num_heads, layer.key_dim
    q = dense(layer.query_dense, query).reshape(*query.shape[:2], heads, depth)
    k = dense(layer.key_dense, value).reshape(*value.shape[:2], heads, depth)
    v = dense(layer.value_dense, value).reshape(*value.shape[:2], heads, depth)
    logits = np.einsum("bthd,bshd->bhts", q, k) / np.sqrt(depth)
    logits = np.where(mask[:, None, None, :], logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    context = np.einsum("bhts,bshd->bthd", weights, v).reshape(*query.shape[:2], heads * depth)
    return dense(layer.output_dense, context), weights


def test_matches_numpy_reference():
    layer = MHSA(num_heads=3, key_dim=4)
    output, weights = layer(X, MEMORY, value_mask=MEMORY_MASK, return_attention_scores=True)
    expected_output, expected_weights = numpy_attention(layer, X, MEMORY, MEMORY_MASK)
    np.testing.assert_allclose(ops.convert_to_numpy(output), expected_output, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected_weights, atol=1e-6)


def test_weights_sum_to_one_and_zero_on_masked_keys():
    layer = MHSA(num_heads=2, key_dim=4, causal=True)
    query_mask = np.array([[1] * 5, [1] * 3 + [0] * 2, [1] * 1 + [0] * 4], bool)
    _, weights = layer(X, query_mask=query_mask, return_attention_scores=True)
    weights = ops.convert_to_numpy(weights)  # [B, H, T, S]
    causal = np.tril(np.ones((5, 5), bool))
    allowed = causal[None, None] & query_mask[:, None, None, :]
    assert np.all(weights[~np.broadcast_to(allowed, weights.shape)] == 0)
    sums = weights.sum(-1)
    real_rows = np.broadcast_to(query_mask[:, None, :], sums.shape)
    np.testing.assert_allclose(sums[real_rows], 1.0, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_padding_never_changes_real_outputs(causal):
    layer = MHSA(num_heads=2, key_dim=4, causal=causal)
    short = X[:, :3]
    padded = np.concatenate([short, rng.normal(size=(3, 4, 8)).astype("float32")], axis=1)
    mask = np.array([[1] * 3 + [0] * 4] * 3, bool)
    reference = ops.convert_to_numpy(layer(short))
    with_padding = ops.convert_to_numpy(layer(padded, query_mask=mask))
    np.testing.assert_allclose(with_padding[:, :3], reference, atol=1e-5)
    assert np.all(with_padding[:, 3:] == 0)


def test_cached_steps_reproduce_teacher_forcing_with_fixed_shapes():
    layer = MHSA(num_heads=2, key_dim=4, causal=True)
    full = ops.convert_to_numpy(layer(X))
    cache = layer.initial_state(batch_size=3, max_length=7)
    shapes, outputs = set(), []
    for t in range(5):
        output, cache = layer.step(X[:, t], cache, t)
        shapes.add((tuple(cache["key"].shape), tuple(cache["value"].shape)))
        outputs.append(ops.convert_to_numpy(output))
    np.testing.assert_allclose(np.stack(outputs, 1), full, atol=1e-5)
    assert shapes == {((3, 2, 7, 4), (3, 2, 7, 4))}  # [B, H, L, D]


def test_cross_attention_keys_computed_once_match_call():
    layer = MHSA(num_heads=2, key_dim=4)
    direct = layer(X, MEMORY, value_mask=MEMORY_MASK)
    kv = layer.project_memory(MEMORY)
    reused, _ = layer.attend(X, kv["key"], kv["value"], MEMORY_MASK)
    np.testing.assert_allclose(ops.convert_to_numpy(reused), ops.convert_to_numpy(direct), atol=1e-6)


def test_cache_overflow_is_a_clear_error():
    layer = MHSA(num_heads=2, key_dim=4, causal=True)
    cache = layer.initial_state(batch_size=3, max_length=2)
    with pytest.raises(ValueError, match="KV cache overflow.*Received: t=2"):
        layer.step(X[:, 0], cache, 2)


def test_bad_ranks_are_clear_errors():
    layer = MHSA(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="`query` must have rank 3. Received"):
        layer(X[0])
    cross = MHSA(num_heads=2, key_dim=4)
    cross(X, MEMORY)
    with pytest.raises(ValueError, match="`value` must have last dimension 12"):
        cross(X, MEMORY[..., :5])
    with pytest.raises(ValueError, match="`query_t` must have last dimension 8"):
        layer.step(X[:, 0, :3], layer.initial_state(3, 4), 0)
    with pytest.raises(ValueError, match="num_heads"):
        MHSA(num_heads=0, key_dim=4)


def test_no_slice_update_anywhere_in_kseq():
    import pathlib

    root = pathlib.Path(kseq.__file__).parent
    offenders = [p for p in root.rglob("*.py") if "slice_update" in p.read_text()]
    assert offenders == []
