"""The residual wrapper shared by every Transformer sub-layer (pre- or post-LN)."""

import keras


class ResidualNorm:
    """Applies `x + dropout(f(norm(x)))` (pre-LN) or `norm(x + dropout(f(x)))` (post-LN).

    Not a layer: a helper owned by a block, which creates and tracks the norm
    and dropout layers itself.
    """

    def __init__(self, norm, dropout, norm_first):
        self.norm = norm
        self.dropout = dropout
        self.norm_first = norm_first

    def __call__(self, x, sublayer, training=None):
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)), training=training)
        return self.norm(x + self.dropout(sublayer(x), training=training))


def make_norm(layer, name, epsilon, input_shape):
    norm = keras.layers.LayerNormalization(
        epsilon=epsilon, dtype=layer.dtype_policy, name=name
    )
    norm.build(input_shape)
    return norm
