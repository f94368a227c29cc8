"""One decoder block of the convolutional seq2seq model: causal gated convolution,
then its own dot-product attention over the encoder (Gehring et al., 2017).

Shape letters: `B` batch, `T` target length, `S` source length, `H` channels,
`E` embedding width, `k` kernel size, `N` rows in a search step.
"""

import keras
from keras import ops

from kseq.layers.bahdanau_attention import masked_softmax
from kseq.layers.checks import require_rank
from kseq.layers.gated_convolution import RESIDUAL_SCALE, GatedConvolution


@keras.saving.register_keras_serializable(package="kseq")
class ConvDecoderBlock(keras.layers.Layer):
    """`[B, T, H]` -> `([B, T, H], attention [B, T, S])`.

    `y = GLU(causal conv(x))`; the attention query is `W_q y + g` (`g`: the
    target embeddings, `[B, T, E]`), scores are `query · keys` over the encoder
    outputs, and the context (a weighted sum of `values`) is projected back to
    `H` and added: `out = ((y + W_c c)·√½ + x)·√½`.

    `step` decodes one position with the last `k-1` block inputs as state and
    gives the same numbers as the full call.

    Args:
        hidden_dim: `H`.
        embedding_dim: `E`, the width of `g`, `keys` and `values`.
        kernel_size: `k`.
        dropout: dropout before the convolution.

    Call arguments:
        inputs: `[B, T, H]`; target_embedding: `[B, T, E]`;
        keys, values: `[B, S, E]` from the encoder; memory_mask: `[B, S]`.

    Example:
    >>> import numpy as np, kseq
    >>> block = kseq.layers.ConvDecoderBlock(8, embedding_dim=4, kernel_size=3)
    >>> x, g = np.ones((2, 5, 8), "float32"), np.ones((2, 5, 4), "float32")
    >>> keys = np.random.rand(2, 6, 4).astype("float32")
    >>> out, weights = block(x, g, keys, keys, memory_mask=np.ones((2, 6), bool))
    >>> tuple(out.shape), tuple(weights.shape)
    ((2, 5, 8), (2, 5, 6))
    """

    def __init__(self, hidden_dim, embedding_dim, kernel_size=3, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.hidden_dim = hidden_dim
        self.embedding_dim = embedding_dim
        self.kernel_size = kernel_size
        self.dropout = dropout
        self.convolution = GatedConvolution(hidden_dim, kernel_size, causal=True,
                                            dropout=dropout, dtype=self.dtype_policy,
                                            name="convolution")
        self.query_projection = keras.layers.Dense(embedding_dim, dtype=self.dtype_policy,
                                                   name="query_projection")
        self.context_projection = keras.layers.Dense(hidden_dim, dtype=self.dtype_policy,
                                                     name="context_projection")

    def build(self, inputs_shape, *args, **kwargs):
        self.convolution.build(inputs_shape)
        self.query_projection.build((None, None, self.hidden_dim))
        self.context_projection.build((None, None, self.embedding_dim))
        self.built = True

    def _attend(self, x, y, target_embedding, keys, values, memory_mask):
        """Shared by `call` ([B, T, ·]) and `step` ([N, 1, ·])."""
        query = self.query_projection(y) + target_embedding  # [B, T, E]
        scores = ops.einsum("bte,bse->bts", query, keys)  # [B, T, S]
        weights = masked_softmax(scores, memory_mask[:, None, :])  # float32
        context = ops.einsum("bts,bse->bte", ops.cast(weights, values.dtype), values)
        y = (y + self.context_projection(context)) * RESIDUAL_SCALE
        return (y + x) * RESIDUAL_SCALE, weights

    def call(self, inputs, target_embedding, keys, values, memory_mask=None, training=None):
        require_rank("inputs", inputs, 3)
        if memory_mask is None:
            memory_mask = ops.ones(ops.shape(keys)[:2], dtype="bool")
        y = self.convolution(inputs, training=training)
        return self._attend(inputs, y, target_embedding, keys, values, memory_mask)

    def initial_state(self, batch):
        """The step state: the last `k-1` block inputs, zeros `[N, k-1, H]`."""
        return self.convolution.initial_state(batch, self.hidden_dim)

    def step(self, input_t, embedding_t, window, keys, values, memory_mask):
        """`[N, H]` input, `[N, E]` embedding -> `(out [N, H], window, weights [N, S])`."""
        y, window = self.convolution.step(input_t, window)
        out, weights = self._attend(input_t[:, None], y[:, None], embedding_t[:, None], keys,
                                    values, memory_mask)
        return out[:, 0], window, weights[:, 0]

    def compute_output_shape(self, inputs_shape, target_embedding_shape, keys_shape,
                             values_shape=None, memory_mask_shape=None):
        return inputs_shape, (*inputs_shape[:2], keys_shape[1])

    def get_config(self):
        return {**super().get_config(), "hidden_dim": self.hidden_dim,
                "embedding_dim": self.embedding_dim, "kernel_size": self.kernel_size,
                "dropout": self.dropout}
