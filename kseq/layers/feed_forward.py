"""The position-wise feed-forward sub-layer of a Transformer block."""

import keras


@keras.saving.register_keras_serializable(package="kseq")
class FeedForward(keras.layers.Layer):
    """`Dense(intermediate_dim, activation) -> dropout -> Dense(E)`, position by position.

    Args:
        intermediate_dim: hidden width.
        activation: activation of the hidden layer.
        dropout: dropout rate after the activation.

    Call arguments:
        inputs: `[..., E]`.

    Returns:
        `[..., E]`.

    Example:
    >>> import numpy as np, kseq
    >>> tuple(kseq.layers.FeedForward(16)(np.ones((2, 3, 8), "float32")).shape)
    (2, 3, 8)
    """

    def __init__(self, intermediate_dim, activation="relu", dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.intermediate_dim = intermediate_dim
        self.activation = activation
        self.dropout = dropout
        self.supports_masking = True

    def build(self, inputs_shape):
        self.inner = keras.layers.Dense(
            self.intermediate_dim, activation=self.activation,
            dtype=self.dtype_policy, name="intermediate",
        )
        self.inner.build(inputs_shape)
        self.outer = keras.layers.Dense(inputs_shape[-1], dtype=self.dtype_policy, name="output")
        self.outer.build(tuple(inputs_shape[:-1]) + (self.intermediate_dim,))
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.built = True

    def call(self, inputs, training=None):
        return self.outer(self.dropout_layer(self.inner(inputs), training=training))

    def get_config(self):
        return {
            **super().get_config(),
            "intermediate_dim": self.intermediate_dim,
            "activation": self.activation,
            "dropout": self.dropout,
        }
