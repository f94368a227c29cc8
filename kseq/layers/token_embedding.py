"""Token embedding whose table can double as the output projection."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kseq")
class TokenEmbedding(keras.layers.Layer):
    """Maps ids to vectors, scaled by `√E`; `project` reuses the table for logits.

    Id 0 is padding: `compute_mask` marks it False when `mask_zero` is set.

    Args:
        vocabulary_size: `V`.
        embedding_dim: `E`.
        scale: multiply vectors by `√E` (Transformer convention).
        mask_zero: produce a padding mask for id 0.

    Call arguments:
        token_ids: int `[B, T]` (or `[B]` for a step); with `reverse=True`,
            hidden states `[..., E]` instead.
        reverse: project hidden states to logits `[..., V]` with the table.

    Returns:
        `[B, T, E]`, or logits `[..., V]` when `reverse`.

    Example:
    >>> import numpy as np, kseq
    >>> embed = kseq.layers.TokenEmbedding(vocabulary_size=10, embedding_dim=4)
    >>> vectors = embed(np.array([[1, 2, 0]]))
    >>> tuple(vectors.shape), tuple(embed.project(vectors).shape)
    ((1, 3, 4), (1, 3, 10))
    """

    def __init__(self, vocabulary_size, embedding_dim, scale=True, mask_zero=True, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.scale = scale
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero

    def build(self, inputs_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.vocabulary_size, self.embedding_dim),
            initializer=keras.initializers.RandomNormal(stddev=self.embedding_dim**-0.5),
        )
        self.built = True

    def call(self, token_ids, reverse=False):
        if reverse:
            # Logits from hidden states: a layer call, so the table is read at run
            # time (a plain method on a symbolic tensor would freeze it as a constant).
            table = ops.cast(self.embeddings, token_ids.dtype)
            return ops.matmul(token_ids, ops.transpose(table))
        vectors = ops.take(ops.cast(self.embeddings, self.compute_dtype), token_ids, axis=0)
        if self.scale:
            vectors = vectors * ops.cast(self.embedding_dim**0.5, self.compute_dtype)
        return vectors

    def project(self, hidden):
        """Logits `[..., V]` from hidden states `[..., E]` with the shared table."""
        return self(hidden, reverse=True)

    def compute_mask(self, token_ids, mask=None, reverse=False):
        if not self.mask_zero or reverse:
            return None
        return ops.not_equal(token_ids, 0)

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary_size": self.vocabulary_size,
            "embedding_dim": self.embedding_dim,
            "scale": self.scale,
            "mask_zero": self.mask_zero,
        }
