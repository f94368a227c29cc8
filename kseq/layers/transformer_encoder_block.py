"""One Transformer encoder block: self-attention and feed-forward, each residual.

Shape letters: `B` batch, `S` source length, `E` width.
"""

import keras
from keras import ops

from kseq.layers.checks import require_rank
from kseq.layers.feed_forward import FeedForward
from kseq.layers.multi_head_self_attention import MultiHeadSelfAttention
from kseq.layers.residual import ResidualNorm, make_norm
from kseq.layers.transformer_block_base import TransformerBlockBase


@keras.saving.register_keras_serializable(package="kseq")
class TransformerEncoderBlock(TransformerBlockBase):
    """Self-attention over the source, then a feed-forward network.

    Args:
        num_heads: attention heads; `E` must be divisible by it.
        intermediate_dim: feed-forward hidden width.
        dropout: dropout on residual branches and attention weights.
        norm_first: pre-LN (True, stable without warm-up tricks) or post-LN.
        activation: feed-forward activation.
        layer_norm_epsilon: epsilon of the layer norms.
        activation_dropout: dropout after the feed-forward activation
            (None: `dropout`).

    Call arguments:
        inputs: `[B, S, E]`.
        padding_mask: optional `[B, S]` bool, True at real tokens.

    Returns:
        `[B, S, E]`; padded rows are zero after attention and never affect real ones.

    Example:
    >>> import numpy as np, kseq
    >>> block = kseq.layers.TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    >>> tuple(block(np.ones((2, 5, 8), "float32")).shape)
    (2, 5, 8)
    """

    def build(self, inputs_shape):
        depth = self.head_depth(inputs_shape[-1])
        self.self_attention = MultiHeadSelfAttention(
            self.num_heads, depth, dropout=self.dropout,
            dtype=self.dtype_policy, name="self_attention",
        )
        self.self_attention.build(inputs_shape)
        self.feed_forward = FeedForward(
            self.intermediate_dim, self.activation, self.activation_dropout,
            dtype=self.dtype_policy, name="feed_forward",
        )
        self.feed_forward.build(inputs_shape)
        self.residual_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        eps = self.layer_norm_epsilon
        self.attention_norm = make_norm(self, "attention_norm", eps, inputs_shape)
        self.feed_forward_norm = make_norm(self, "feed_forward_norm", eps, inputs_shape)
        self.built = True

    def call(self, inputs, padding_mask=None, training=None):
        require_rank("inputs", inputs, 3)
        attention = ResidualNorm(self.attention_norm, self.residual_dropout, self.norm_first)
        feed = ResidualNorm(self.feed_forward_norm, self.residual_dropout, self.norm_first)
        x = attention(
            inputs,
            lambda h: self.self_attention(h, query_mask=padding_mask, training=training),
            training,
        )
        x = feed(x, lambda h: self.feed_forward(h, training=training), training)
        if padding_mask is not None:
            x = x * ops.cast(padding_mask, x.dtype)[:, :, None]
        return x

    def compute_mask(self, inputs, mask=None):
        return mask
