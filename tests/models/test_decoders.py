"""Every decoder, given the same fake memory: step-by-step logits equal teacher-forced ones,
padding in the memory changes nothing, and the config round trip rebuilds it."""

import inspect

import keras
import numpy as np
import pytest

import kseq
from kseq.models.decoders import ConvDecoder, RnnDecoder, TransformerDecoder

V, B, S, T, E = 13, 3, 5, 6, 8

DECODERS = {
    "transformer": lambda: TransformerDecoder(V, num_layers=2, num_heads=2, hidden_dim=E,
                                              intermediate_dim=16, dropout=0.0, max_length=T),
    "transformer-untied-postln": lambda: TransformerDecoder(
        V, num_layers=1, num_heads=2, hidden_dim=E, intermediate_dim=16, dropout=0.0,
        max_length=T, tie_embeddings=False, norm_first=False, position="learned"),
    "rnn-context-gru-2": lambda: RnnDecoder(V, embedding_dim=4, units=E, num_layers=2,
                                            attention=None, dropout=0.0),
    "rnn-bahdanau-gru": lambda: RnnDecoder(V, embedding_dim=4, units=E, attention="bahdanau",
                                           dropout=0.0),
    "rnn-luong-lstm": lambda: RnnDecoder(V, embedding_dim=4, units=E, cell="lstm",
                                         attention="luong", dropout=0.0),
    "transformer-lm": lambda: TransformerDecoder(
        V, num_layers=2, num_heads=2, hidden_dim=E, intermediate_dim=16, dropout=0.0,
        max_length=T, cross_attention=False),
    "conv": lambda: ConvDecoder(V, embedding_dim=E, hidden_dim=16, num_layers=2, dropout=0.0,
                                max_length=T),
}


def fake_memory(seed=0, kind=""):
    """States, values and a summary, with the last two source positions of row 0 padding.

    A decoder-only language model has no source: its memory is an empty mask.
    """
    if kind.endswith("-lm"):
        return {"mask": np.zeros((B, 0), bool)}
    rng = np.random.default_rng(seed)
    mask = np.ones((B, S), bool)
    mask[0, -2:] = False
    return {"states": rng.normal(size=(B, S, E)).astype("float32"), "mask": mask,
            "values": rng.normal(size=(B, S, E)).astype("float32"),
            "final": rng.normal(size=(B, E)).astype("float32")}


def decoder_ids():
    ids = np.random.default_rng(1).integers(4, V, (B, T)).astype("int32")
    ids[:, 0] = kseq.text.START_ID
    ids[1, -2:] = 0  # a shorter target
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_steps_reproduce_teacher_forced_logits(kind):
    decoder, memory, ids = DECODERS[kind](), fake_memory(kind=kind), decoder_ids()
    forward = decoder(ids, memory).numpy()  # [B, T, V]
    assert forward.shape == (B, T, V) and forward.dtype == np.float32
    prepared = decoder.prepare(memory)
    state = decoder.initial_state(prepared)
    for t in range(T):
        logits, state = decoder.step(ids[:, t], state, prepared, t)
        real = ids[:, t] != 0
        np.testing.assert_allclose(logits.numpy()[real], forward[real, t], atol=2e-5)
        assert state["attention"].shape == memory["mask"].shape


@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_memory_padding_changes_no_output(kind):
    decoder, memory, ids = DECODERS[kind](), fake_memory(), decoder_ids()
    noisy = dict(memory)
    for key in ("states", "values"):
        noisy[key] = memory[key].copy()
        noisy[key][0, -2:] = 100.0  # the padded source positions of row 0
    if kind.startswith("rnn-context") or kind.endswith("-lm"):  # reads no states
        noisy = memory = fake_memory(kind=kind)
    np.testing.assert_allclose(decoder(ids, noisy).numpy(), decoder(ids, memory).numpy(),
                               atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_config_round_trip_rebuilds_the_same_function(kind):
    decoder, memory, ids = DECODERS[kind](), fake_memory(kind=kind), decoder_ids()
    expected = decoder(ids, memory).numpy()
    arguments = set(inspect.signature(type(decoder).__init__).parameters) - {"self", "kwargs"}
    assert set(decoder.get_config()) >= arguments  # every constructor argument is stored
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(decoder))
    restored(ids, memory)
    restored.set_weights(decoder.get_weights())
    np.testing.assert_allclose(restored(ids, memory).numpy(), expected, atol=1e-6)


def test_language_model_decoder_reads_no_memory():
    decoder = DECODERS["transformer-lm"]()
    ids = decoder_ids()
    np.testing.assert_allclose(decoder(ids).numpy(), decoder(ids, fake_memory(kind="-lm")).numpy())
    assert not any("cross" in w.path for w in decoder.weights)


def test_attention_decoder_has_one_layer_and_bad_choices_are_named():
    with pytest.raises(ValueError, match="num_layers"):
        RnnDecoder(V, attention="luong", num_layers=2)
    with pytest.raises(ValueError, match="attention"):
        RnnDecoder(V, attention="dot")
    with pytest.raises(ValueError, match="position"):
        TransformerDecoder(V, position="rotary")
