"""Position embeddings: fixed sinusoidal and learned.

Shape letters: `B` batch, `T` length, `E` width, `L` `max_length`.
"""

import math

import keras
from keras import ops

from kseq.layers.checks import require_rank


def check_fits_table(length, start_index, max_length):
    """A clear error when positions run past the table (where the length is known)."""
    if isinstance(length, int) and isinstance(start_index, int) and (
            start_index + length > max_length):
        raise ValueError(f"The input is longer than the position table: positions up to "
                         f"{start_index + length} need max_length >= that. Received: "
                         f"length={length}, start_index={start_index}, max_length={max_length}")


@keras.saving.register_keras_serializable(package="kseq")
class SinusoidalPositionEmbedding(keras.layers.Layer):
    """Fixed sin/cos position codes (Vaswani et al. 2017), no weights.

    Args:
        max_length: the longest position `L` supported.

    Call arguments:
        inputs: `[B, T, E]`; only its shape is read.
        start_index: position of the first row (used by step decoding).

    Returns:
        `[1, T, E]` position codes, to be added to `inputs`.

    Example:
    >>> import numpy as np, kseq
    >>> layer = kseq.layers.SinusoidalPositionEmbedding(max_length=16)
    >>> tuple(layer(np.zeros((2, 5, 8), "float32")).shape)
    (1, 5, 8)
    """

    def __init__(self, max_length, **kwargs):
        super().__init__(**kwargs)
        self.max_length = max_length
        self.supports_masking = True

    def table(self, width):
        positions = ops.cast(ops.arange(self.max_length), "float32")[:, None]
        half = width // 2
        rates = ops.exp(
            ops.cast(ops.arange(half), "float32") * (-math.log(10000.0) / max(half - 1, 1))
        )
        angles = positions * rates[None, :]  # [L, E/2]
        table = ops.concatenate([ops.sin(angles), ops.cos(angles)], axis=-1)
        if width % 2:
            table = ops.pad(table, [[0, 0], [0, 1]])
        return ops.cast(table, self.compute_dtype)  # [L, E]

    def call(self, inputs, start_index=0):
        require_rank("inputs", inputs, 3)
        length = ops.shape(inputs)[1]
        check_fits_table(length, start_index, self.max_length)
        table = self.table(inputs.shape[-1])
        return ops.slice(table, (start_index, 0), (length, inputs.shape[-1]))[None]

    def at(self, position, width):
        """The code of one position: `[E]`."""
        return ops.take(self.table(width), position, axis=0)

    def get_config(self):
        return {**super().get_config(), "max_length": self.max_length}


@keras.saving.register_keras_serializable(package="kseq")
class LearnedPositionEmbedding(keras.layers.Layer):
    """A trained table of `max_length` position vectors.

    Args:
        max_length: the longest position `L` supported.
        initializer: initializer of the table.

    Call arguments:
        inputs: `[B, T, E]`; only its shape is read.
        start_index: position of the first row.

    Returns:
        `[1, T, E]`.

    Example:
    >>> import numpy as np, kseq
    >>> layer = kseq.layers.LearnedPositionEmbedding(max_length=16)
    >>> tuple(layer(np.zeros((2, 5, 8), "float32")).shape)
    (1, 5, 8)
    """

    def __init__(self, max_length, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.max_length = max_length
        self.supports_masking = True
        self.initializer = keras.initializers.get(initializer)

    def build(self, inputs_shape):
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.max_length, inputs_shape[-1]),
            initializer=self.initializer,
        )
        self.built = True

    def call(self, inputs, start_index=0):
        require_rank("inputs", inputs, 3)
        length = ops.shape(inputs)[1]
        check_fits_table(length, start_index, self.max_length)
        table = ops.cast(self.embeddings, self.compute_dtype)
        return ops.slice(table, (start_index, 0), (length, inputs.shape[-1]))[None]

    def at(self, position, width):
        """The vector of one position: `[E]`."""
        return ops.take(ops.cast(self.embeddings, self.compute_dtype), position, axis=0)

    def get_config(self):
        return {
            **super().get_config(),
            "max_length": self.max_length,
            "initializer": keras.initializers.serialize(self.initializer),
        }
