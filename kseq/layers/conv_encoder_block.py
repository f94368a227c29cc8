"""One encoder block of the convolutional seq2seq model: gated convolution + residual.

Shape letters: `B` batch, `S` source length, `H` channels.
"""

import keras
from keras import ops

from kseq.layers.gated_convolution import RESIDUAL_SCALE, GatedConvolution


@keras.saving.register_keras_serializable(package="kseq")
class ConvEncoderBlock(keras.layers.Layer):
    """`[B, S, H]` -> `[B, S, H]`: `(x + GLU(conv(x))) * sqrt(0.5)`, padding kept at zero.

    Args:
        hidden_dim: `H`, the channels in and out.
        kernel_size: odd width of the (non-causal) convolution.
        dropout: dropout before the convolution.

    Call arguments:
        inputs: `[B, S, H]`.
        padding_mask: optional `[B, S]`, `True` at real tokens.

    Example:
    >>> import numpy as np, kseq
    >>> block = kseq.layers.ConvEncoderBlock(8, kernel_size=3)
    >>> tuple(block(np.ones((2, 5, 8), "float32")).shape)
    (2, 5, 8)
    """

    def __init__(self, hidden_dim, kernel_size=3, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.hidden_dim = hidden_dim
        self.kernel_size = kernel_size
        self.dropout = dropout
        self.convolution = GatedConvolution(hidden_dim, kernel_size, causal=False,
                                            dropout=dropout, dtype=self.dtype_policy,
                                            name="convolution")

    def build(self, inputs_shape):
        self.convolution.build(inputs_shape)
        self.built = True

    def call(self, inputs, padding_mask=None, training=None):
        y = self.convolution(inputs, mask=padding_mask, training=training)
        out = (inputs + y) * RESIDUAL_SCALE
        if padding_mask is not None:
            out = out * ops.cast(padding_mask, out.dtype)[..., None]
        return out

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        return {**super().get_config(), "hidden_dim": self.hidden_dim,
                "kernel_size": self.kernel_size, "dropout": self.dropout}
