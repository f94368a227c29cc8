"""Bahdanau (additive) attention over an encoder memory.

Shape letters: `B` batch, `T` queries, `S` memory length, `E` query width,
`M` memory width, `U` attention units.
"""

import keras
from keras import ops

from kseq.layers.checks import require_depth, require_mask, require_rank

_MASK_LOGIT = -1e9


def masked_softmax(scores, mask):
    """Softmax over the last axis in float32; masked positions get exactly 0."""
    scores = ops.cast(scores, "float32")
    mask = ops.cast(mask, "bool")
    weights = ops.softmax(ops.where(mask, scores, _MASK_LOGIT), axis=-1)
    return ops.where(mask, weights, 0.0)


def expand_query(query):
    """`[B, E]` -> `([B, 1, E], True)`; `[B, T, E]` -> `(same, False)`."""
    if len(query.shape) == 2:
        return query[:, None, :], True
    require_rank("query", query, 3)
    return query, False


def weigh_memory(scores, memory, memory_mask, single):
    """Masked softmax of `scores [B, T, S]`, then the context `[B, T, M]` (or `[B, M]`)."""
    weights = masked_softmax(scores, memory_mask[:, None, :])
    context = ops.einsum("bts,bsm->btm", ops.cast(weights, memory.dtype), memory)
    if single:
        return context[:, 0], weights[:, 0]
    return context, weights


@keras.saving.register_keras_serializable(package="kseq")
class BahdanauAttention(keras.layers.Layer):
    """Additive attention `score(q, m) = vᵀ tanh(W_q q + W_m m)` (Bahdanau et al. 2015).

    With `normalize=True`, `v` is weight-normalised (`g · v / ||v||`) and a bias
    is added inside the tanh (Salimans & Kingma 2016), as in GNMT.

    Args:
        units: `U`, the width of the additive layer.
        normalize: weight-normalise `v`.

    Call arguments:
        query: `[B, E]` (one decoder step) or `[B, T, E]`.
        memory: `[B, S, M]`, or keys from `project_memory` with `memory_keys`.
        memory_mask: `[B, S]` bool, True at real positions (required).
        memory_keys: optional `W_m m` `[B, S, U]`, computed once per sentence.

    Returns:
        `(context [B, (T,) M], weights [B, (T,) S])`; weights are 0 on padding.

    Example:
    >>> import numpy as np, kseq
    >>> attention = kseq.layers.BahdanauAttention(units=8)
    >>> memory, mask = np.ones((2, 5, 6), "float32"), np.ones((2, 5), bool)
    >>> context, weights = attention(np.ones((2, 4), "float32"), memory, memory_mask=mask)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 6), (2, 5))
    """

    def __init__(self, units, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.normalize = normalize

    def build(self, query_shape, memory_shape=None):
        memory_shape = memory_shape or query_shape
        self.query_dense = keras.layers.Dense(self.units, use_bias=False,
                                              dtype=self.dtype_policy, name="query")
        self.query_dense.build(query_shape)
        self.memory_dense = keras.layers.Dense(self.units, use_bias=False,
                                               dtype=self.dtype_policy, name="memory")
        self.memory_dense.build(memory_shape)
        self.v = self.add_weight(name="v", shape=(self.units,), initializer="glorot_uniform")
        if self.normalize:
            self.g = self.add_weight(name="g", shape=(),
                                     initializer=keras.initializers.Constant(self.units**-0.5))
            self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")
        self.built = True

    def project_memory(self, memory):
        """`W_m m`: `[B, S, U]`, once per sentence."""
        require_rank("memory", memory, 3)
        return self.memory_dense(memory)

    def call(self, query, memory, memory_mask=None, memory_keys=None):
        require_rank("memory", memory, 3)
        require_mask("memory_mask", memory_mask)
        query, single = expand_query(query)
        require_depth("query", query, self.query_dense.kernel.shape[0])
        keys = self.project_memory(memory) if memory_keys is None else memory_keys
        hidden = self.query_dense(query)[:, :, None, :] + keys[:, None, :, :]  # [B, T, S, U]
        v = ops.cast(self.v, hidden.dtype)
        if self.normalize:
            hidden = hidden + ops.cast(self.b, hidden.dtype)
            v = ops.cast(self.g, hidden.dtype) * v / ops.sqrt(ops.sum(v * v))
        scores = ops.sum(ops.tanh(hidden) * v, axis=-1)  # [B, T, S]
        return weigh_memory(scores, memory, memory_mask, single)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "normalize": self.normalize}
