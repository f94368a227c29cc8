"""`SequencePooling`: an encoder's memory -> one vector per sequence (mean, max, attention, last).

Shape letters: `B` batch, `S` positions, `E` width.
"""

import keras
from keras import ops

from kseq.arguments import check_choice

POOLINGS = ("mean", "max", "attention", "last")


@keras.saving.register_keras_serializable(package="kseq")
class SequencePooling(keras.layers.Layer):
    """Pools `memory["states"]` `[B, S, E]` over its real positions into `[B, E]`.

    - `"mean"`: the average of the real positions (padding never counts);
    - `"max"`: the largest value of each feature over the real positions
      (Kim 2014's max-over-time pooling);
    - `"attention"`: a learned score per position, a softmax over the real
      ones, the weighted sum (Yang et al. 2016's word attention);
    - `"last"`: `memory["final"]` (an RNN encoder's last states, both
      directions), for encoders that have it.

    A sequence without real positions (an empty text) pools to zeros.

    Args:
        mode: one of `POOLINGS`.

    Call arguments:
        memory: an encoder's memory dict (`"states"`, `"mask"`, `"final"`).

    Returns:
        `[B, E]` (`[B, E']` for `"last"`).

    Example:
    >>> import numpy as np, kseq
    >>> pool = kseq.layers.SequencePooling("mean")
    >>> memory = {"states": np.array([[[1.0], [3.0], [9.0]]], "float32"),
    ...           "mask": np.array([[True, True, False]])}
    >>> pool(memory).numpy().tolist()
    [[2.0]]
    """

    def __init__(self, mode="mean", **kwargs):
        super().__init__(**kwargs)
        check_choice("mode", mode, POOLINGS)
        self.mode = mode
        # The memory's own mask is read in `call`; nothing is passed on ([B, E] has no time).
        self.supports_masking = True
        if mode == "attention":
            self.scores_hidden = None  # built with the width, in `build`

    def compute_mask(self, memory, mask=None):
        return None

    def build(self, memory_shape):
        if self.mode == "attention":
            width = memory_shape["states"][-1]
            self.scores_hidden = keras.layers.Dense(width, activation="tanh",
                                                    dtype=self.dtype_policy, name="score_hidden")
            self.scores_hidden.build(memory_shape["states"])
            self.scores = keras.layers.Dense(1, use_bias=False, dtype=self.dtype_policy,
                                             name="score")
            self.scores.build((*memory_shape["states"][:-1], width))
        self.built = True

    def call(self, memory):
        if self.mode == "last":
            return memory["final"]
        states = memory["states"]
        mask = ops.cast(memory["mask"], states.dtype)  # [B, S]
        if self.mode == "mean":
            total = ops.sum(states * mask[..., None], axis=1)
            return total / ops.maximum(ops.sum(mask, axis=1, keepdims=True), 1.0)
        if self.mode == "max":
            real = memory["mask"][..., None]  # [B, S, 1]
            lowest = ops.min(ops.where(real, states, 0.0), axis=1)  # a floor no real value beats
            largest = ops.max(ops.where(real, states, lowest[:, None]), axis=1)
            return ops.where(ops.any(memory["mask"], axis=1)[:, None], largest, 0.0)
        scores = self.scores(self.scores_hidden(states))[..., 0]  # [B, S]
        scores = ops.where(memory["mask"], ops.cast(scores, "float32"), -1e9)
        weights = ops.softmax(scores, axis=-1) * ops.cast(mask, "float32")  # empty rows: 0
        return ops.einsum("bs,bse->be", ops.cast(weights, states.dtype), states)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}
