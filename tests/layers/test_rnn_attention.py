import warnings

import keras
import numpy as np
import pytest
from keras import ops

import kseq
from testing import run_layer_test

rng = np.random.default_rng(4)
QUERY = rng.normal(size=(3, 6)).astype("float32")
QUERIES = rng.normal(size=(3, 4, 6)).astype("float32")
MEMORY = rng.normal(size=(3, 5, 6)).astype("float32")
MASK = np.array([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4], bool)


class BahdanauContext(kseq.layers.BahdanauAttention):
    def call(self, query, memory, memory_mask=None):
        return super().call(query, memory, memory_mask=memory_mask)[0]


class LuongContext(kseq.layers.LuongAttention):
    def call(self, query, memory, memory_mask=None):
        return super().call(query, memory, memory_mask=memory_mask)[0]


# XLA compiles the fits whose ops the others' are a subset of (normalised Bahdanau;
# scaled `general` Luong holds `dot`'s ops).
@pytest.mark.parametrize(
    "cls, init, xla",
    [(BahdanauContext, {"units": 8}, False),
     (BahdanauContext, {"units": 8, "normalize": True}, True),
     (LuongContext, {"score": "dot"}, False),
     (LuongContext, {"score": "general", "scale": True}, True),
     (LuongContext, {"score": "concat", "units": 7}, True)],
)
@pytest.mark.slow
def test_harness(cls, init, xla):
    run_layer_test(cls, init, [QUERIES, MEMORY], (3, 4, 6), call_kwargs={"memory_mask": MASK},
                   xla=xla)


def softmax_masked(scores, mask):
    scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True)


def test_bahdanau_matches_numpy():
    layer = kseq.layers.BahdanauAttention(units=8)
    context, weights = layer(QUERY, MEMORY, memory_mask=MASK)
    wq, wm = np.asarray(layer.query_dense.kernel), np.asarray(layer.memory_dense.kernel)
    v = np.asarray(layer.v)
    scores = np.tanh((QUERY @ wq)[:, None, :] + MEMORY @ wm) @ v  # [B, S]
    expected = softmax_masked(scores, MASK)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected, atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(context),
                               np.einsum("bs,bsm->bm", expected, MEMORY), atol=1e-5)


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_luong_matches_numpy(score):
    layer = kseq.layers.LuongAttention(score=score)
    _, weights = layer(QUERY, MEMORY, memory_mask=MASK)
    if score == "dot":
        scores = np.einsum("be,bse->bs", QUERY, MEMORY)
    elif score == "general":
        scores = np.einsum("be,bse->bs", QUERY, MEMORY @ np.asarray(layer.kernel))
    else:
        w, v = np.asarray(layer.concat_dense.kernel), np.asarray(layer.v)
        pairs = np.concatenate([np.repeat(QUERY[:, None], 5, 1), MEMORY], -1)
        scores = np.tanh(pairs @ w) @ v
    np.testing.assert_allclose(ops.convert_to_numpy(weights), softmax_masked(scores, MASK),
                               atol=1e-5)


@pytest.mark.parametrize("layer", [kseq.layers.BahdanauAttention(units=8),
                                   kseq.layers.LuongAttention(score="concat")])
def test_padding_never_matters_and_steps_match_sequences(layer):
    context, weights = layer(QUERIES, MEMORY, memory_mask=MASK)
    weights = ops.convert_to_numpy(weights)
    assert np.all(weights[~np.broadcast_to(MASK[:, None], weights.shape)] == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    noisy = MEMORY.copy()
    noisy[~MASK] = 50.0
    context_noisy, _ = layer(QUERIES, noisy, memory_mask=MASK)
    np.testing.assert_allclose(ops.convert_to_numpy(context_noisy), ops.convert_to_numpy(context),
                               atol=1e-5)
    single, _ = layer(QUERIES[:, 2], MEMORY, memory_mask=MASK)
    np.testing.assert_allclose(ops.convert_to_numpy(single), ops.convert_to_numpy(context)[:, 2],
                               atol=1e-5)


def test_bad_input():
    with pytest.raises(ValueError, match="memory_mask"):
        kseq.layers.BahdanauAttention(units=4)(QUERY, MEMORY)
    with pytest.raises(ValueError, match="score"):
        kseq.layers.LuongAttention(score="cosine")
    with pytest.raises(ValueError, match="same width"):
        kseq.layers.LuongAttention(score="dot")(QUERY[:, :4], MEMORY, memory_mask=MASK)


EMBEDDED = rng.normal(size=(3, 4, 5)).astype("float32")
DECODERS = [{"units": 6, "cell": "gru", "attention": "bahdanau"},
            {"units": 6, "cell": "lstm", "attention": "luong", "luong_score": "dot"},
            {"units": 6, "cell": "gru", "attention": "luong", "input_feeding": False}]


@pytest.mark.slow
@pytest.mark.parametrize("init", DECODERS)
def test_attention_decoder_harness(init):
    # The third decoder's cell and attention are the first's and the second's: no XLA fit.
    run_layer_test(kseq.layers.AttentionDecoder, init, [EMBEDDED, MEMORY], (3, 4, 6),
                   call_kwargs={"memory_mask": MASK}, xla=init is not DECODERS[2])


@pytest.mark.parametrize("init", DECODERS)
def test_attention_decoder_steps_match_teacher_forcing(init):
    decoder = kseq.layers.AttentionDecoder(**init)
    full, full_weights = decoder(EMBEDDED, MEMORY, memory_mask=MASK,
                                 return_attention_scores=True)
    keys = decoder.project_memory(MEMORY)
    state = decoder.initial_state(3)
    for t in range(4):
        out, state, weights = decoder.step(EMBEDDED[:, t], state, MEMORY, keys, MASK)
        np.testing.assert_allclose(ops.convert_to_numpy(out), ops.convert_to_numpy(full)[:, t],
                                   atol=1e-5)
        np.testing.assert_allclose(ops.convert_to_numpy(weights),
                                   ops.convert_to_numpy(full_weights)[:, t], atol=1e-6)
    assert np.all(ops.convert_to_numpy(full_weights)[~np.broadcast_to(MASK[:, None],
                                                                      (3, 4, 5))] == 0)


def test_attention_decoder_bad_input():
    with pytest.raises(ValueError, match="cell"):
        kseq.layers.AttentionDecoder(units=4, cell="rnn")
    with pytest.raises(ValueError, match="memory_mask"):
        kseq.layers.AttentionDecoder(units=4)(EMBEDDED, MEMORY)


class MaskSeen(keras.layers.Layer):
    """Records the Keras mask its input carries."""

    def __init__(self):
        super().__init__()
        self.supports_masking = True

    def call(self, inputs, mask=None):
        self.mask = None if mask is None else ops.convert_to_numpy(mask).tolist()
        return inputs


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_attention_decoder_cell_hands_a_step_mask_on_without_a_warning(cell):
    embedded = kseq.layers.TokenEmbedding(9, 5)(np.array([3, 0, 4]))  # mask_zero: [B] mask
    decoder_cell = kseq.layers.AttentionDecoderCell(units=6, cell=cell)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Keras warns when a layer drops a mask
        out, state, _ = decoder_cell(embedded, decoder_cell.initial_state(3), MEMORY, None, MASK)
        after_output, after_h = MaskSeen(), MaskSeen()
        after_output(out), after_h(state["h"])
    assert after_output.mask == [True, False, True]
    assert after_h.mask is None
