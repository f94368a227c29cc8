"""`TextCnnEncoder`: parallel convolutions of several widths over word embeddings (Kim, 2014).

Shape letters: `B` batch, `S` input length, `E` embedding width, `F` filters
per width, `W` number of widths.
"""

import keras
from keras import ops

from kseq.arguments import check_int
from kseq.errors import KseqError
from kseq.layers.token_embedding import TokenEmbedding
from kseq.models.part import Part, store_arguments
from kseq.models.part_catalog import register_encoder


def checked_widths(kernel_sizes):
    """`kernel_sizes` as a tuple of distinct ints >= 1, or a one-line `KseqError`."""
    if not isinstance(kernel_sizes, (list, tuple)) or not kernel_sizes:
        raise KseqError(f"kernel_sizes should list convolution widths, e.g. [3, 4, 5]. "
                        f"Received: kernel_sizes={kernel_sizes!r}")
    widths = tuple(check_int(f"kernel_sizes[{i}]", width, minimum=1)
                   for i, width in enumerate(kernel_sizes))
    if len(set(widths)) != len(widths):
        raise KseqError(f"kernel_sizes should not repeat a width (raise `filters` for more "
                        f"filters of one width). Received: kernel_sizes={list(kernel_sizes)!r}")
    return widths


@keras.saving.register_keras_serializable(package="kseq")
class TextCnnEncoder(Part):
    """One ReLU convolution per width over the embeddings, side by side.

    Kim's sentence CNN: a classifier max-pools each filter over time
    (`pooling="max"`), so a filter of width 3 fires on the best-matching word
    triple anywhere in the sentence ("how many people", "what city is"). Unlike
    `ConvEncoder` the layers are not stacked: each width reads the embeddings
    directly, and there are no position embeddings. Padded positions are set
    to zero before convolving, which is what the convolution's own "same"
    padding reads past the sentence's end: a position's output does not
    depend on how much padding follows.

    Kim's CNN-rand differs in training, not in shape: dropout only on the
    pooled vector (here `dropout` also drops embeddings, and the classifier
    drops the pooled vector too) and Adadelta with a max-norm constraint
    (kseq compiles Adam with warm-up).

    Args:
        vocabulary_size: the token vocabulary.
        embedding_dim: `E`.
        kernel_sizes: the widths, e.g. `(3, 4, 5)` (Kim's).
        filters: `F`, per width.
        dropout: on the embeddings, in training.

    Call arguments:
        token_ids: `[B, S]` int ids, 0 = padding.
        training: dropout on or off.

    Returns:
        `{"states": [B, S, W·F], "mask": [B, S] bool, "final": [B, W·F]}`:
        `"final"` is each feature's maximum over the real positions (0 for an
        empty row).

    Example:
    >>> import numpy as np, kseq
    >>> encoder = kseq.models.encoders.TextCnnEncoder(10, embedding_dim=4,
    ...                                               kernel_sizes=(2, 3), filters=5)
    >>> memory = encoder(np.array([[4, 5, 6, 0]], "int32"))
    >>> tuple(memory["states"].shape), tuple(memory["final"].shape)
    ((1, 4, 10), (1, 10))
    """

    CONFIG = ("vocabulary_size", "embedding_dim", "kernel_sizes", "filters", "dropout")

    def __init__(self, vocabulary_size, embedding_dim=128, kernel_sizes=(3, 4, 5), filters=100,
                 dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        kernel_sizes = checked_widths(kernel_sizes)
        check_int("filters", filters, minimum=1)
        store_arguments(self, locals())
        dtype, name = self.dtype_policy, self.name
        self.token_embedding = TokenEmbedding(vocabulary_size, embedding_dim, scale=False,
                                              dtype=dtype, name=f"{name}_token_embedding")
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=dtype, name=f"{name}_dropout")
        self.convolutions = [keras.layers.Conv1D(filters, width, padding="same",
                                                 activation="relu", dtype=dtype,
                                                 name=f"{name}_conv_{index}")
                             for index, width in enumerate(kernel_sizes)]

    def get_config(self):
        return {**super().get_config(), "kernel_sizes": list(self.kernel_sizes)}

    def call(self, token_ids, training=None):
        mask = ops.not_equal(token_ids, 0)  # [B, S]
        real = ops.cast(mask, self.compute_dtype)[..., None]
        embedded = self.dropout_layer(self.token_embedding(token_ids), training=training) * real
        states = ops.concatenate([conv(embedded) for conv in self.convolutions],
                                 axis=-1) * real  # [B, S, W·F]
        # ReLU outputs are >= 0, so zeroed padding never beats a real position's maximum.
        return {"states": states, "mask": mask, "final": ops.max(states, axis=1)}


@register_encoder("textcnn", builds=TextCnnEncoder)
def text_cnn_encoder(vocabulary_size, embedding_dim=None, hidden_dim=128, kernel_sizes=(3, 4, 5),
                     filters=100, dropout=0.1, dtype=None, name="encoder"):
    """The catalog's `"textcnn"` encoder; `embedding_dim` defaults to `hidden_dim`."""
    return TextCnnEncoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                          kernel_sizes=kernel_sizes, filters=filters, dropout=dropout,
                          dtype=dtype, name=name)
