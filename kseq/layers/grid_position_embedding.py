"""`GridPositionEmbedding`: a learned 2-D position signal for a feature grid."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kseq")
class GridPositionEmbedding(keras.layers.Layer):
    """`[B, h, w, E]` -> the same plus a learned row vector and a learned column vector.

    Row plus column (`h + w` vectors, not `h·w`) tells attention where a cell
    lies ("above", "left of") with few parameters. The grid size is read from
    the input at build time.

    Args:
        initializer: for both tables (a Keras initializer or its name).

    Example:
    >>> import numpy as np, kseq
    >>> layer = kseq.layers.GridPositionEmbedding()
    >>> out = layer(np.zeros((1, 2, 3, 4), "float32"))
    >>> tuple(out.shape), bool(np.allclose(out[0, 0, 0] - out[0, 1, 0],
    ...                                    layer.rows[0] - layer.rows[1]))
    ((1, 2, 3, 4), True)
    """

    def __init__(self, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)

    def build(self, grid_shape):
        _, height, width, channels = grid_shape
        init = self.initializer
        self.rows = self.add_weight(name="rows", shape=(height, channels), initializer=init)
        self.columns = self.add_weight(name="columns", shape=(width, channels), initializer=init)
        self.built = True

    def call(self, grid):
        rows = ops.cast(self.rows, grid.dtype)[:, None, :]  # [h, 1, E]
        columns = ops.cast(self.columns, grid.dtype)[None, :, :]  # [1, w, E]
        return grid + rows + columns

    def get_config(self):
        return {**super().get_config(),
                "initializer": keras.initializers.serialize(self.initializer)}
