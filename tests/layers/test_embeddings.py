import numpy as np
import pytest
from keras import ops

import kseq
from testing import run_layer_test

X = np.random.default_rng(2).normal(size=(2, 5, 8)).astype("float32")
IDS = np.array([[3, 4, 5, 0, 0], [1, 2, 0, 0, 0]], "int32")


@pytest.mark.parametrize(
    "layer_cls", [kseq.layers.SinusoidalPositionEmbedding, kseq.layers.LearnedPositionEmbedding]
)
def test_position_embedding_harness_and_step_offsets(layer_cls):
    layer = run_layer_test(layer_cls, {"max_length": 16}, X, (1, 5, 8), run_training=False)
    layer = layer_cls(max_length=16)
    whole = ops.convert_to_numpy(layer(X))[0]
    for t in range(5):
        np.testing.assert_allclose(ops.convert_to_numpy(layer.at(t, 8)), whole[t], atol=1e-6)
        shifted = ops.convert_to_numpy(layer(X[:, :1], start_index=t))[0, 0]
        np.testing.assert_allclose(shifted, whole[t], atol=1e-6)


def test_sinusoidal_values():
    table = ops.convert_to_numpy(kseq.layers.SinusoidalPositionEmbedding(8).table(4))
    np.testing.assert_allclose(table[0], [0, 0, 1, 1], atol=1e-6)
    np.testing.assert_allclose(table[3, 0], np.sin(3.0), atol=1e-6)


@pytest.mark.slow
def test_token_embedding_harness_mask_and_tied_projection():
    run_layer_test(
        kseq.layers.TokenEmbedding, {"vocabulary_size": 10, "embedding_dim": 8}, IDS, (2, 5, 8)
    )
    layer = kseq.layers.TokenEmbedding(10, 8)
    vectors = layer(IDS)
    np.testing.assert_array_equal(ops.convert_to_numpy(layer.compute_mask(IDS)), IDS != 0)
    logits = ops.convert_to_numpy(layer.project(vectors))
    table = ops.convert_to_numpy(layer.embeddings)
    np.testing.assert_allclose(logits, ops.convert_to_numpy(vectors) @ table.T, atol=1e-5)


@pytest.mark.parametrize("layer", [kseq.layers.SinusoidalPositionEmbedding,
                                   kseq.layers.LearnedPositionEmbedding])
def test_inputs_longer_than_the_table_are_refused_with_a_clear_error(layer):
    with pytest.raises(ValueError, match="longer than the position table"):
        layer(max_length=4)(np.zeros((1, 5, 8), "float32"))
