"""Constructor arguments and config shared by the Transformer encoder and decoder blocks."""

import keras

from kseq.layers.checks import require_rank


class TransformerBlockBase(keras.layers.Layer):
    """Stores the block hyper-parameters and checks the width against the heads.

    Args:
        num_heads: attention heads; the width `E` must be divisible by it.
        intermediate_dim: feed-forward hidden width.
        dropout: dropout on residual branches and attention weights.
        norm_first: pre-LN (True) or post-LN.
        activation: feed-forward activation.
        layer_norm_epsilon: epsilon of the layer norms.
        activation_dropout: dropout after the feed-forward activation; None
            means `dropout` (keras-hub's blocks and fairseq's default use 0).
    """

    def __init__(self, num_heads, intermediate_dim, dropout=0.0, norm_first=True,
                 activation="relu", layer_norm_epsilon=1e-5, activation_dropout=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.norm_first = norm_first
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.activation_dropout = dropout if activation_dropout is None else activation_dropout
        self.supports_masking = True

    def head_depth(self, width):
        """Per-head depth `E / H`, with a clear error when it does not divide."""
        if width % self.num_heads:
            raise ValueError(
                "The input width must be divisible by `num_heads`. "
                f"Received: width={width}, num_heads={self.num_heads}"
            )
        return width // self.num_heads

    def compute_output_spec(self, inputs, *args, **kwargs):
        """`[B, T, E]` like `inputs`, in the compute dtype, without running `call`.

        Keras otherwise runs `call` on symbolic inputs for every block of every
        functional model it builds or loads: about half the time of building or
        loading a Transformer translator. `build` has made every sub-layer by then.
        """
        require_rank("inputs", inputs, 3)
        return keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "intermediate_dim": self.intermediate_dim,
            "dropout": self.dropout,
            "norm_first": self.norm_first,
            "activation": self.activation,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "activation_dropout": self.activation_dropout,
        }
