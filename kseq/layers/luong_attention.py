"""Luong (multiplicative) attention: dot, general and concat scores.

Shape letters: `B` batch, `T` queries, `S` memory length, `E` query width, `M` memory width.
"""

import keras
from keras import ops

from kseq.layers.bahdanau_attention import expand_query, weigh_memory
from kseq.layers.checks import require_mask, require_rank

SCORES = ("dot", "general", "concat")


@keras.saving.register_keras_serializable(package="kseq")
class LuongAttention(keras.layers.Layer):
    """Luong et al. (2015) attention.

    - `"dot"`: `qᵀm` (needs `E == M`);
    - `"general"`: `qᵀ W m`;
    - `"concat"`: `vᵀ tanh(W [q; m])`.

    With `scale=True` a learned scalar `g` multiplies the scores (as in tfa's
    scaled Luong attention).

    Args:
        score: one of `SCORES`.
        scale: learn a score scale.
        units: width of the concat layer (concat only; defaults to `M`).

    Call arguments / Returns: as `BahdanauAttention`.

    Example:
    >>> import numpy as np, kseq
    >>> attention = kseq.layers.LuongAttention(score="general")
    >>> memory, mask = np.ones((2, 5, 6), "float32"), np.ones((2, 5), bool)
    >>> context, weights = attention(np.ones((2, 3, 4), "float32"), memory, memory_mask=mask)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 3, 6), (2, 3, 5))
    """

    def __init__(self, score="general", scale=False, units=None, **kwargs):
        super().__init__(**kwargs)
        if score not in SCORES:
            raise ValueError(f"`score` must be one of {SCORES}. Received: score={score!r}")
        self.score = score
        self.scale = scale
        self.units = units

    def build(self, query_shape, memory_shape=None):
        memory_shape = memory_shape or query_shape
        query_width, memory_width = query_shape[-1], memory_shape[-1]
        if self.score == "dot" and query_width != memory_width:
            raise ValueError("score='dot' needs query and memory of the same width. "
                             f"Received: query width={query_width}, memory width={memory_width}")
        if self.score == "general":
            self.kernel = self.add_weight(name="kernel", shape=(memory_width, query_width),
                                          initializer="glorot_uniform")
        if self.score == "concat":
            units = self.units or memory_width
            self.concat_dense = keras.layers.Dense(units, use_bias=False,
                                                   dtype=self.dtype_policy, name="concat")
            self.concat_dense.build((None, query_width + memory_width))
            self.v = self.add_weight(name="v", shape=(units,), initializer="glorot_uniform")
        if self.scale:
            self.g = self.add_weight(name="g", shape=(), initializer="ones")
        self.built = True

    def project_memory(self, memory):
        """`W m` for `"general"` (`[B, S, E]`), else `memory`: computed once per sentence."""
        require_rank("memory", memory, 3)
        if self.score == "general":
            return ops.einsum("bsm,me->bse", memory, ops.cast(self.kernel, memory.dtype))
        return memory

    def _scores(self, query, memory, keys):
        if self.score in ("dot", "general"):
            return ops.einsum("bte,bse->bts", query, keys)
        steps, length = ops.shape(query)[1], ops.shape(memory)[1]
        pairs = ops.concatenate([
            ops.broadcast_to(query[:, :, None, :], (ops.shape(query)[0], steps, length,
                                                    query.shape[-1])),
            ops.broadcast_to(memory[:, None, :, :], (ops.shape(memory)[0], steps, length,
                                                     memory.shape[-1])),
        ], axis=-1)  # [B, T, S, E+M]
        hidden = ops.tanh(self.concat_dense(pairs))
        return ops.sum(hidden * ops.cast(self.v, hidden.dtype), axis=-1)

    def call(self, query, memory, memory_mask=None, memory_keys=None):
        require_rank("memory", memory, 3)
        require_mask("memory_mask", memory_mask)
        query, single = expand_query(query)
        keys = self.project_memory(memory) if memory_keys is None else memory_keys
        scores = self._scores(query, memory, keys)
        if self.scale:
            scores = scores * ops.cast(self.g, scores.dtype)
        return weigh_memory(scores, memory, memory_mask, single)

    def get_config(self):
        return {**super().get_config(), "score": self.score, "scale": self.scale,
                "units": self.units}
