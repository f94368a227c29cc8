"""`SequencePooling`: every mode reads only real positions; an empty row pools to zeros."""

import numpy as np
import pytest

import kseq

STATES = np.array([[[1.0, -4.0], [3.0, -2.0], [50.0, 50.0]],
                   [[-7.0, -9.0], [99.0, 99.0], [99.0, 99.0]],
                   [[5.0, 5.0], [5.0, 5.0], [5.0, 5.0]]], "float32")
MASK = np.array([[True, True, False], [True, False, False], [False, False, False]])


@pytest.mark.parametrize("mode, expected", [
    ("mean", [[2.0, -3.0], [-7.0, -9.0], [0.0, 0.0]]),
    ("max", [[3.0, -2.0], [-7.0, -9.0], [0.0, 0.0]]),
])
def test_mean_and_max_skip_padding(mode, expected):
    pooled = kseq.layers.SequencePooling(mode)({"states": STATES, "mask": MASK})
    np.testing.assert_allclose(pooled.numpy(), expected)


def test_attention_weights_only_real_positions():
    pool = kseq.layers.SequencePooling("attention")
    pooled = pool({"states": STATES, "mask": MASK}).numpy()
    assert pooled[1].tolist() == [-7.0, -9.0]  # one real position: all the weight
    assert pooled[2].tolist() == [0.0, 0.0]
    assert 1.0 <= pooled[0, 0] <= 3.0 and -4.0 <= pooled[0, 1] <= -2.0  # a convex mix
