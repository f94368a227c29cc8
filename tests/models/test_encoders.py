"""Every encoder returns the shared memory dict, and padding never changes a real output."""

import inspect

import keras
import numpy as np
import pytest

from kseq.models.encoders import ConvEncoder, RnnEncoder, TransformerEncoder

V = 11

ENCODERS = {
    "transformer": (lambda: TransformerEncoder(V, num_layers=2, num_heads=2, hidden_dim=8,
                                               intermediate_dim=16, dropout=0.0, max_length=8),
                    8, False),
    "rnn-bi-gru-2": (lambda: RnnEncoder(V, embedding_dim=4, units=6, num_layers=2, dropout=0.0),
                     12, True),
    "rnn-lstm": (lambda: RnnEncoder(V, embedding_dim=4, units=6, cell="lstm",
                                    bidirectional=False, dropout=0.0), 6, True),
    "conv": (lambda: ConvEncoder(V, embedding_dim=4, hidden_dim=8, num_layers=2, dropout=0.0,
                                 max_length=8), 4, False),
}


@pytest.mark.parametrize("kind", sorted(ENCODERS))
def test_memory_dict_and_padding_invariance(kind):
    build, width, has_final = ENCODERS[kind]
    encoder = build()
    short = np.array([[4, 5, 6]], "int32")
    padded = np.array([[4, 5, 6, 0, 0]], "int32")
    a, b = encoder(short), encoder(padded)
    assert a["states"].shape == (1, 3, width)
    assert b["mask"].numpy().tolist() == [[True, True, True, False, False]]
    np.testing.assert_allclose(b["states"].numpy()[:, :3], a["states"].numpy(), atol=1e-5)
    assert ("final" in a) == has_final
    if has_final:
        assert a["final"].shape == (1, width)
        np.testing.assert_allclose(b["final"].numpy(), a["final"].numpy(), atol=1e-5)


@pytest.mark.parametrize("kind", sorted(ENCODERS))
def test_config_round_trip(kind):
    encoder = ENCODERS[kind][0]()
    ids = np.array([[4, 5, 6, 0]], "int32")
    expected = encoder(ids)["states"].numpy()
    arguments = set(inspect.signature(type(encoder).__init__).parameters) - {"self", "kwargs"}
    assert set(encoder.get_config()) >= arguments  # every constructor argument is stored
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(encoder))
    restored(ids)
    restored.set_weights(encoder.get_weights())
    np.testing.assert_allclose(restored(ids)["states"].numpy(), expected, atol=1e-6)
