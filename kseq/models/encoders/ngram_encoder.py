"""`NgramEncoder`: a bag of word unigrams and hashed bigrams (fastText's sentence encoder).

Shape letters: `B` batch, `S` input length, `E` embedding width.
"""

import keras
from keras import ops

from kseq.errors import KseqError
from kseq.layers.token_embedding import TokenEmbedding
from kseq.models.part import Part, store_arguments
from kseq.models.part_catalog import register_encoder

# Bigram (a, b) -> k = a·V + b, a distinct integer per pair, then a universal hash
# ((α·k + 1) mod p) mod buckets, 1-based (0 is padding): p is prime and above every k, so
# distinct pairs collide only through the last modulus, about as often as random draws
# would. α·k stays below 2^63 (int64) for vocabularies up to `MAX_VOCABULARY`.
HASH_PRIME = 2 ** 34 - 41
HASH_MULTIPLIER = 486_187_739
MAX_VOCABULARY = 131_000  # V² < HASH_PRIME


@keras.saving.register_keras_serializable(package="kseq")
class NgramEncoder(Part):
    """Each token and each pair of adjacent tokens becomes one memory position.

    A classifier pooling these (mean: fastText, Joulin et al. 2017; max: a
    learned, binarised bag of n-grams) sees which words and word pairs occur,
    without order beyond the pair: the strong baseline of short-text
    classification, at a fraction of an RNN's cost. Bigrams are hashed into
    `ngram_buckets` rows, so no bigram vocabulary is stored and unseen pairs
    of known words still have a row.

    Args:
        vocabulary_size: the token vocabulary.
        embedding_dim: `E`.
        ngram_buckets: rows of the bigram table (0 turns bigrams off).
        dropout: on the embeddings, in training.

    Call arguments:
        token_ids: `[B, S]` int ids, 0 = padding.
        training: dropout on or off.

    Returns:
        `{"states": [B, 2S, E], "mask": [B, 2S] bool, "final": [B, E]}`: the
        unigrams then the bigrams (position 0's bigram and any pair touching
        padding are masked; `[B, S]` without bigrams); `"final"` is the mean
        of the real positions.

    Example:
    >>> import numpy as np, kseq
    >>> encoder = kseq.models.encoders.NgramEncoder(10, embedding_dim=4, ngram_buckets=16)
    >>> memory = encoder(np.array([[4, 5, 6, 0]], "int32"))
    >>> tuple(memory["states"].shape), int(memory["mask"].numpy().sum())  # 3 words, 2 pairs
    ((1, 8, 4), 5)
    """

    CONFIG = ("vocabulary_size", "embedding_dim", "ngram_buckets", "dropout")

    def __init__(self, vocabulary_size, embedding_dim=64, ngram_buckets=50_000, dropout=0.1,
                 **kwargs):
        super().__init__(**kwargs)
        if vocabulary_size > MAX_VOCABULARY:
            raise KseqError(f"NgramEncoder hashes word pairs of vocabularies up to "
                            f"{MAX_VOCABULARY:,} tokens. Received: vocabulary_size="
                            f"{vocabulary_size}")
        store_arguments(self, locals())
        dtype, name = self.dtype_policy, self.name
        self.token_embedding = TokenEmbedding(vocabulary_size, embedding_dim, dtype=dtype,
                                              name=f"{name}_token_embedding")
        self.bigram_embedding = (TokenEmbedding(ngram_buckets + 1, embedding_dim, dtype=dtype,
                                                name=f"{name}_bigram_embedding")
                                 if ngram_buckets else None)
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=dtype, name=f"{name}_dropout")

    def bigram_ids(self, token_ids):
        """`[B, S]` ids -> `[B, S]` bucket ids of (previous, current); 0 where either is padding
        or at the first position."""
        ids = ops.cast(token_ids, "int64")
        previous = ops.pad(ids[:, :-1], [[0, 0], [1, 0]])
        pair = previous * self.vocabulary_size + ids  # distinct per (previous, current)
        bucket = (pair * HASH_MULTIPLIER + 1) % HASH_PRIME % self.ngram_buckets + 1
        real = ops.logical_and(ops.not_equal(previous, 0), ops.not_equal(ids, 0))
        return ops.cast(ops.where(real, bucket, 0), "int32")

    def call(self, token_ids, training=None):
        mask = ops.not_equal(token_ids, 0)  # [B, S]
        states = self.token_embedding(token_ids)  # [B, S, E]
        if self.bigram_embedding is not None:
            bigrams = self.bigram_ids(token_ids)
            states = ops.concatenate([states, self.bigram_embedding(bigrams)], axis=1)
            mask = ops.concatenate([mask, ops.not_equal(bigrams, 0)], axis=1)  # [B, 2S]
        states = self.dropout_layer(states, training=training)
        weights = ops.cast(mask, states.dtype)[..., None]
        final = ops.sum(states * weights, axis=1) / ops.maximum(ops.sum(weights, axis=1), 1.0)
        return {"states": states, "mask": mask, "final": final}


@register_encoder("ngrams", builds=NgramEncoder)
def ngram_encoder(vocabulary_size, embedding_dim=None, hidden_dim=128, ngram_buckets=50_000,
                  dropout=0.1, dtype=None, name="encoder"):
    """The catalog's `"ngrams"` encoder; `embedding_dim` defaults to `hidden_dim`."""
    return NgramEncoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                        ngram_buckets=ngram_buckets, dropout=dropout, dtype=dtype, name=name)
