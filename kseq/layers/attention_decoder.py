"""`AttentionDecoder`: runs an `AttentionDecoderCell` over a whole target sequence.

Keras 3's `RNN` has no `constants=` to carry the memory, so this layer owns its
time loop: a `tf.while_loop` with `maximum_iterations` and `TensorArray`s
(`ops.scan` fails under XLA on a dynamic time axis; see DESIGN §3).

Shape letters: `B` batch, `T` target length, `E` input width, `U` units, `S` memory length.
"""

import keras
import tensorflow as tf  # the time loop: tf.while_loop + TensorArray (no keras.ops twin)

from kseq.layers.attention_decoder_cell import AttentionDecoderCell
from kseq.layers.checks import require_mask, require_rank


@keras.saving.register_keras_serializable(package="kseq")
class AttentionDecoder(keras.layers.Layer):
    """Teacher-forced attention decoder; `step` decodes one position for search.

    Args:
        Those of `AttentionDecoderCell`.

    Call arguments:
        inputs: `[B, T, E]` embedded decoder inputs.
        memory: `[B, S, M]`; memory_mask: `[B, S]` bool (required).
        return_attention_scores: also return weights `[B, T, S]`.

    Returns:
        `[B, T, U]` attentional outputs (and the weights when asked).

    Example:
    >>> import numpy as np, kseq
    >>> decoder = kseq.layers.AttentionDecoder(units=8, cell="lstm", attention="luong")
    >>> memory, mask = np.ones((2, 5, 8), "float32"), np.ones((2, 5), bool)
    >>> tuple(decoder(np.ones((2, 3, 4), "float32"), memory, memory_mask=mask).shape)
    (2, 3, 8)
    """

    def __init__(self, units, cell="gru", attention="bahdanau", luong_score="general",
                 input_feeding=True, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.cell = cell
        self.attention = attention
        self.luong_score = luong_score
        self.input_feeding = input_feeding
        self.dropout = dropout
        self.decoder_cell = AttentionDecoderCell(**self._cell_config(), dtype=self.dtype_policy,
                                                 name="decoder_cell")

    def _cell_config(self):
        return dict(units=self.units, cell=self.cell, attention=self.attention,
                    luong_score=self.luong_score, input_feeding=self.input_feeding,
                    dropout=self.dropout)

    def build(self, inputs_shape, memory_shape=None):
        self.decoder_cell.build((None, inputs_shape[-1]), memory_shape)
        self.built = True

    def call(self, inputs, memory, memory_mask=None, initial_state=None,
             return_attention_scores=False, training=None):
        require_rank("inputs", inputs, 3)
        require_rank("memory", memory, 3)
        require_mask("memory_mask", memory_mask)
        batch, steps = tf.shape(inputs)[0], tf.shape(inputs)[1]
        keys = self.decoder_cell.project_memory(memory)
        time_major = tf.transpose(inputs, [1, 0, 2])  # [T, B, E]
        outputs = tf.TensorArray(self.compute_dtype, size=steps)
        weights = tf.TensorArray("float32", size=steps)

        def body(t, state, outputs, weights):
            out, state, w = self.decoder_cell(time_major[t], state, memory, keys, memory_mask,
                                              training=training)
            return t + 1, state, outputs.write(t, out), weights.write(t, tf.cast(w, "float32"))

        _, _, outputs, weights = tf.while_loop(
            lambda t, *_: t < steps, body,
            (tf.constant(0), initial_state or self.decoder_cell.initial_state(batch), outputs,
             weights),
            maximum_iterations=steps)
        outputs = tf.transpose(outputs.stack(), [1, 0, 2])  # [B, T, U]
        if return_attention_scores:
            return outputs, tf.transpose(weights.stack(), [1, 0, 2])  # [B, T, S]
        return outputs

    def initial_state(self, batch_size):
        return self.decoder_cell.initial_state(batch_size)

    def project_memory(self, memory):
        return self.decoder_cell.project_memory(memory)

    def step(self, inputs_t, state, memory, memory_keys, memory_mask):
        """`[B, E]` -> `(output [B, U], state, weights [B, S])` for one position."""
        return self.decoder_cell(inputs_t, state, memory, memory_keys, memory_mask)

    def compute_mask(self, inputs, memory=None, mask=None, **kwargs):
        return None

    def get_config(self):
        return {**super().get_config(), **self._cell_config()}
