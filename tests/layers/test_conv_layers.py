import numpy as np
import pytest
from keras import ops

import kseq
from testing import run_layer_test

rng = np.random.default_rng(7)
X = rng.normal(size=(3, 6, 8)).astype("float32")
G = rng.normal(size=(3, 6, 4)).astype("float32")
KEYS = rng.normal(size=(3, 5, 4)).astype("float32")
MASK = np.array([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4], bool)


class DecoderBlockOutput(kseq.layers.ConvDecoderBlock):
    """The harness trains single-output layers: keep the block output."""

    def call(self, inputs, target_embedding, keys, values, memory_mask=None, training=None):
        return super().call(inputs, target_embedding, keys, values, memory_mask=memory_mask,
                            training=training)[0]


@pytest.mark.slow
@pytest.mark.parametrize("causal", [False, True])
def test_gated_convolution_harness(causal):
    # The causal layer's ops hold the other's (and its left padding): XLA compiles that one.
    run_layer_test(kseq.layers.GatedConvolution, {"units": 5, "kernel_size": 3, "causal": causal},
                   X, (3, 6, 5), xla=causal)


@pytest.mark.slow
def test_encoder_and_decoder_block_harness():
    run_layer_test(kseq.layers.ConvEncoderBlock, {"hidden_dim": 8, "kernel_size": 5}, X,
                   (3, 6, 8))
    run_layer_test(DecoderBlockOutput, {"hidden_dim": 8, "embedding_dim": 4}, [X, G, KEYS, KEYS],
                   (3, 6, 8), call_kwargs={"memory_mask": MASK})


def test_gated_convolution_matches_numpy():
    layer = kseq.layers.GatedConvolution(2, kernel_size=3)
    out = ops.convert_to_numpy(layer(X))
    kernel, bias = np.asarray(layer.kernel), np.asarray(layer.bias)
    padded = np.pad(X, [(0, 0), (1, 1), (0, 0)])
    y = np.stack([np.einsum("bkc,kco->bo", padded[:, t:t + 3], kernel) for t in range(6)], 1)
    y = y + bias
    np.testing.assert_allclose(out, y[..., :2] / (1 + np.exp(-y[..., 2:])), atol=1e-5)


def test_causal_outputs_ignore_the_future_and_encoder_ignores_padding():
    layer = kseq.layers.GatedConvolution(4, kernel_size=3, causal=True)
    changed = X.copy()
    changed[:, 4:] = 100.0
    np.testing.assert_allclose(ops.convert_to_numpy(layer(changed))[:, :4],
                               ops.convert_to_numpy(layer(X))[:, :4], atol=1e-5)
    block = kseq.layers.ConvEncoderBlock(8, kernel_size=3)
    mask = np.array([[1] * 4 + [0] * 2] * 3, bool)
    padded_junk = X.copy()
    padded_junk[:, 4:] = 50.0
    a = ops.convert_to_numpy(block(X, padding_mask=mask))
    b = ops.convert_to_numpy(block(padded_junk, padding_mask=mask))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-5)
    assert np.all(b[:, 4:] == 0)


def test_decoder_block_step_matches_forward_and_weights_are_masked():
    block = kseq.layers.ConvDecoderBlock(8, embedding_dim=4, kernel_size=3)
    full, weights = block(X, G, KEYS, KEYS, memory_mask=MASK)
    window = block.initial_state(3)
    for t in range(6):
        out, window, w = block.step(X[:, t], G[:, t], window, KEYS, KEYS, MASK)
        np.testing.assert_allclose(ops.convert_to_numpy(out), ops.convert_to_numpy(full)[:, t],
                                   atol=1e-5)
        np.testing.assert_allclose(ops.convert_to_numpy(w), ops.convert_to_numpy(weights)[:, t],
                                   atol=1e-6)
    weights = ops.convert_to_numpy(weights)
    assert np.all(weights[~np.broadcast_to(MASK[:, None], weights.shape)] == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def test_bad_settings_are_clear():
    with pytest.raises(ValueError, match="odd.*kernel_size=4"):
        kseq.layers.GatedConvolution(4, kernel_size=4)
    with pytest.raises(ValueError, match="causal"):
        kseq.layers.GatedConvolution(4).step(X[:, 0], X[:, :2])
