"""A GRU or LSTM decoder cell with attention and input feeding (Luong et al. 2015).

Shape letters: `B` batch, `E` input width, `U` units, `S` memory length, `M` memory width.
"""

import keras
from keras import ops

from kseq.layers.bahdanau_attention import BahdanauAttention
from kseq.layers.checks import require_rank
from kseq.layers.luong_attention import LuongAttention

CELLS = ("gru", "lstm")
ATTENTIONS = ("bahdanau", "luong")


@keras.saving.register_keras_serializable(package="kseq")
class AttentionDecoderCell(keras.layers.Layer):
    """One decoder step: RNN cell, attention over the memory, attentional output.

    `h_t = RNN([x_t; h̃_{t-1}], state)`, `c_t, a_t = attention(h_t, memory)`,
    `h̃_t = tanh(W_c [c_t; h_t])`. With input feeding, `h̃_{t-1}` (the previous
    attentional vector) is fed back with the next input.

    Args:
        units: `U`.
        cell: `"gru"` or `"lstm"`.
        attention: `"bahdanau"` or `"luong"`.
        luong_score: Luong's score (`"dot"`, `"general"`, `"concat"`).
        input_feeding: feed `h̃_{t-1}` back.
        dropout: dropout on the RNN input.

    Call arguments:
        inputs: `[B, E]` at one step.
        state: dict from `initial_state` / a previous call: `"h"` (and `"c"`
            for LSTM) and `"feed"` `[B, U]`.
        memory: `[B, S, M]`; memory_keys: from `project_memory`;
        memory_mask: `[B, S]` bool.

    Masking: `inputs` may carry a Keras mask `[B]` (the step's token embedding
    with `mask_zero`: False where the fed id is padding). Every row is computed
    on its own, so a padded row changes no other; the mask is handed on to
    `output` (the row's output stems from a padded input; the state's `"feed"`
    is that same tensor), not to `"h"` or the weights.

    Returns:
        `(output h̃_t [B, U], new_state, weights [B, S])`.

    Example:
    >>> import numpy as np, kseq
    >>> cell = kseq.layers.AttentionDecoderCell(units=8)
    >>> memory, mask = np.ones((2, 5, 6), "float32"), np.ones((2, 5), bool)
    >>> state = cell.initial_state(2)
    >>> out, state, weights = cell(np.ones((2, 4), "float32"), state, memory, None, mask)
    >>> tuple(out.shape), tuple(weights.shape)
    ((2, 8), (2, 5))
    """

    def __init__(self, units, cell="gru", attention="bahdanau", luong_score="general",
                 input_feeding=True, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if cell not in CELLS or attention not in ATTENTIONS:
            raise ValueError(f"`cell` must be one of {CELLS} and `attention` one of "
                             f"{ATTENTIONS}. Received: cell={cell!r}, attention={attention!r}")
        self.units = units
        self.cell = cell
        self.attention = attention
        self.luong_score = luong_score
        self.input_feeding = input_feeding
        self.dropout = dropout
        self.supports_masking = True

    def build(self, inputs_shape, memory_shape=None):
        memory_shape = memory_shape or (None, None, self.units)
        rnn_input = inputs_shape[-1] + (self.units if self.input_feeding else 0)
        make = keras.layers.GRUCell if self.cell == "gru" else keras.layers.LSTMCell
        self.rnn_cell = make(self.units, dtype=self.dtype_policy, name="rnn_cell")
        self.rnn_cell.build((None, rnn_input))
        if self.attention == "bahdanau":
            self.attention_layer = BahdanauAttention(self.units, dtype=self.dtype_policy,
                                                     name="attention")
        else:
            self.attention_layer = LuongAttention(self.luong_score, dtype=self.dtype_policy,
                                                  name="attention")
        self.attention_layer.build((None, self.units), memory_shape)
        self.output_dense = keras.layers.Dense(self.units, activation="tanh", use_bias=False,
                                               dtype=self.dtype_policy, name="attentional")
        self.output_dense.build((None, memory_shape[-1] + self.units))
        self.input_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.built = True

    def initial_state(self, batch_size):
        zeros = ops.zeros((batch_size, self.units), dtype=self.compute_dtype)
        state = {"h": zeros, "feed": zeros}
        if self.cell == "lstm":
            state["c"] = zeros
        return state

    def project_memory(self, memory):
        """Attention keys of the memory, once per sentence."""
        return self.attention_layer.project_memory(memory)

    def call(self, inputs, state, memory, memory_keys, memory_mask, training=None):
        require_rank("inputs", inputs, 2)
        x = ops.concatenate([inputs, state["feed"]], -1) if self.input_feeding else inputs
        x = self.input_dropout(x, training=training)
        states = [state["h"], state["c"]] if self.cell == "lstm" else [state["h"]]
        h, new_states = self.rnn_cell(x, states, training=training)
        context, weights = self.attention_layer(h, memory, memory_mask=memory_mask,
                                                memory_keys=memory_keys)
        output = self.output_dense(ops.concatenate([ops.cast(context, h.dtype), h], -1))
        new_state = {"h": h, "feed": output}
        if self.cell == "lstm":
            new_state["c"] = new_states[1]
        return output, new_state, weights

    def compute_mask(self, inputs, previous_mask=None):
        """`(mask of output, masks of the state (None), mask of the weights (None))`."""
        keys = ("h", "feed", "c") if self.cell == "lstm" else ("h", "feed")
        return previous_mask, {key: None for key in keys}, None

    def get_config(self):
        return {**super().get_config(), "units": self.units, "cell": self.cell,
                "attention": self.attention, "luong_score": self.luong_score,
                "input_feeding": self.input_feeding, "dropout": self.dropout}
