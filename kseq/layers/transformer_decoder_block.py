"""One Transformer decoder block: causal self-attention, cross-attention (optional), feed-forward.

Shape letters: `B` batch, `T` target length, `S` source length, `E` width,
`H` heads, `D` head depth, `L` cache length.
"""

import keras

from kseq.layers.checks import require_mask, require_rank
from kseq.layers.feed_forward import FeedForward
from kseq.layers.multi_head_self_attention import MultiHeadSelfAttention
from kseq.layers.residual import ResidualNorm, make_norm
from kseq.layers.transformer_block_base import TransformerBlockBase


@keras.saving.register_keras_serializable(package="kseq")
class TransformerDecoderBlock(TransformerBlockBase):
    """Decoder block usable teacher-forced (`call`) or one token at a time (`step`).

    Both paths run the same sub-layers, so step decoding reproduces the
    teacher-forced outputs.

    Args:
        num_heads: attention heads; `E` must be divisible by it.
        intermediate_dim: feed-forward hidden width.
        dropout: dropout on residual branches and attention weights.
        norm_first: pre-LN (True) or post-LN.
        activation: feed-forward activation.
        layer_norm_epsilon: epsilon of the layer norms.
        activation_dropout: dropout after the feed-forward activation
            (None: `dropout`).
        cross_attention: attend to a memory (an encoder's output); False gives
            a decoder-only (language model) block that reads none.

    Call arguments:
        inputs: `[B, T, E]` decoder inputs.
        memory: `[B, S, E]` encoder output (None without cross-attention).
        memory_mask: `[B, S]` bool, True at real source tokens (required with
            a memory).
        decoder_mask: optional `[B, T]` bool.
        return_attention_scores: also return cross-attention weights `[B, H, T, S]`.

    Returns:
        `[B, T, E]` (and the weights when asked).

    Example:
    >>> import numpy as np, kseq
    >>> block = kseq.layers.TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    >>> x, memory = np.ones((2, 4, 8), "float32"), np.ones((2, 5, 8), "float32")
    >>> mask = np.ones((2, 5), bool)
    >>> tuple(block(x, memory, memory_mask=mask).shape)
    (2, 4, 8)
    """

    def __init__(self, num_heads, intermediate_dim, cross_attention=True, **kwargs):
        super().__init__(num_heads, intermediate_dim, **kwargs)
        self.has_cross_attention = cross_attention

    def build(self, inputs_shape, memory_shape=None):
        memory_shape = memory_shape or inputs_shape
        depth = self.head_depth(inputs_shape[-1])
        self.self_attention = MultiHeadSelfAttention(
            self.num_heads, depth, causal=True, dropout=self.dropout,
            dtype=self.dtype_policy, name="self_attention",
        )
        self.self_attention.build(inputs_shape)
        if self.has_cross_attention:
            self.cross_attention = MultiHeadSelfAttention(
                self.num_heads, depth, dropout=self.dropout,
                dtype=self.dtype_policy, name="cross_attention",
            )
            self.cross_attention.build(inputs_shape, memory_shape)
        self.feed_forward = FeedForward(
            self.intermediate_dim, self.activation, self.activation_dropout,
            dtype=self.dtype_policy, name="feed_forward",
        )
        self.feed_forward.build(inputs_shape)
        self.residual_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        eps = self.layer_norm_epsilon
        self.self_attention_norm = make_norm(self, "self_attention_norm", eps, inputs_shape)
        if self.has_cross_attention:
            self.cross_attention_norm = make_norm(self, "cross_attention_norm", eps,
                                                  inputs_shape)
        self.feed_forward_norm = make_norm(self, "feed_forward_norm", eps, inputs_shape)
        self.built = True

    def _residuals(self):
        cross_norm = self.cross_attention_norm if self.has_cross_attention else None
        return [
            ResidualNorm(norm, self.residual_dropout, self.norm_first) if norm else None
            for norm in (self.self_attention_norm, cross_norm, self.feed_forward_norm)
        ]

    def _cross_and_feed_forward(self, x, cross_kv, memory_mask, training):
        """The two sub-layers shared by `call` and `step`; returns `(x, weights)`."""
        _, cross, feed = self._residuals()
        found = {"weights": None}

        def cross_attend(h):
            out, found["weights"] = self.cross_attention.attend(
                h, cross_kv["key"], cross_kv["value"], memory_mask, training
            )
            return out

        if cross is not None:
            x = cross(x, cross_attend, training)
        x = feed(x, lambda h: self.feed_forward(h, training=training), training)
        return x, found["weights"]

    def call(
        self,
        inputs,
        memory,
        memory_mask=None,
        decoder_mask=None,
        return_attention_scores=False,
        training=None,
    ):
        require_rank("inputs", inputs, 3)
        if self.has_cross_attention:
            require_rank("memory", memory, 3)
            require_mask("memory_mask", memory_mask)
        self_residual = self._residuals()[0]
        x = self_residual(
            inputs,
            lambda h: self.self_attention(h, query_mask=decoder_mask, training=training),
            training,
        )
        cross_kv = self.project_memory(memory) if self.has_cross_attention else None
        x, weights = self._cross_and_feed_forward(x, cross_kv, memory_mask, training)
        return (x, weights) if return_attention_scores else x

    def compute_output_spec(self, inputs, memory=None, memory_mask=None, decoder_mask=None,
                            return_attention_scores=False, training=None):
        if return_attention_scores:  # rare (attention plots): let Keras run `call`
            return keras.layers.Layer.compute_output_spec(
                self, inputs, memory, memory_mask=memory_mask, decoder_mask=decoder_mask,
                return_attention_scores=True, training=training)
        if self.has_cross_attention:
            require_rank("memory", memory, 3)
            require_mask("memory_mask", memory_mask)
        return super().compute_output_spec(inputs)

    def compute_mask(self, inputs, memory=None, mask=None, **kwargs):
        return None

    # -- incremental decoding --

    def project_memory(self, memory):
        """Cross-attention keys and values `{"key", "value"}` `[B, H, S, D]`, once a sentence."""
        require_rank("memory", memory, 3)
        return self.cross_attention.project_memory(memory)

    def initial_state(self, batch_size, max_length):
        """Self-attention KV cache of fixed length `L`."""
        return self.self_attention.initial_state(batch_size, max_length)

    def step(self, inputs_t, cache, cross_kv, memory_mask, t):
        """Decodes position `t`.

        Args:
            inputs_t: `[B, E]`.
            cache: self-attention cache from `initial_state` / a previous step.
            cross_kv: from `project_memory`.
            memory_mask: `[B, S]` bool.
            t: scalar position.

        Returns:
            `(outputs [B, E], new_cache, cross_weights [B, H, S])`; the weights
            are None without cross-attention.
        """
        require_rank("inputs_t", inputs_t, 2)
        if self.has_cross_attention:
            require_mask("memory_mask", memory_mask)
        self_residual = self._residuals()[0]
        new_cache = {}

        def self_attend(h):
            out, cache_out = self.self_attention.step(h, cache, t)
            new_cache.update(cache_out)
            return out

        # Rank 2 throughout: a Dense on `[B, 1, E]` would be a tensordot (a dozen
        # shape ops around the matmul), paid at every step of a search.
        x = self_residual(inputs_t, self_attend)
        x, weights = self._cross_and_feed_forward(x, cross_kv, memory_mask, None)
        return x, new_cache, None if weights is None else weights[:, :, 0]

    def prefill(self, inputs, cache, cross_kv=None, memory_mask=None):
        """Decodes positions `0 .. P-1` at once, as `P` calls of `step` would.

        Args:
            inputs: `[B, P, E]`, every position real.
            cache: the self-attention cache (length `L >= P`), slots `< P` unused.
            cross_kv, memory_mask: as for `step` (None without cross-attention).

        Returns:
            `(outputs [B, P, E], new_cache)`.
        """
        require_rank("inputs", inputs, 3)
        new_cache = {}

        def self_attend(h):
            out, cache_out = self.self_attention.prefill(h, cache)
            new_cache.update(cache_out)
            return out

        x = self._residuals()[0](inputs, self_attend)
        x, _ = self._cross_and_feed_forward(x, cross_kv, memory_mask, None)
        return x, new_cache

    def get_config(self):
        return {**super().get_config(), "cross_attention": self.has_cross_attention}
