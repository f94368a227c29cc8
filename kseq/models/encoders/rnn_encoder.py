"""`RnnEncoder`: token ids -> `{"states", "mask", "final"}` through stacked GRU/LSTM layers.

Shape letters: `B` batch, `S` source length, `E` embedding width, `U` units,
`D` directions (2 when bidirectional, else 1).
"""

import keras
from keras import ops

from kseq.arguments import check_choice, check_int
from kseq.layers.token_embedding import TokenEmbedding
from kseq.models.part import Part, store_arguments
from kseq.models.part_catalog import register_encoder

CELLS = {"gru": keras.layers.GRU, "lstm": keras.layers.LSTM}


@keras.saving.register_keras_serializable(package="kseq")
class RnnEncoder(Part):
    """Embedding, dropout, `num_layers` (bi)directional recurrent layers.

    `"final"` is the top layer's last hidden state of each direction,
    concatenated (an LSTM's cell state is not part of it): the summary an RNN
    decoder's bridge reads.

    Args:
        vocabulary_size: source vocabulary.
        embedding_dim: `E`.
        units: `U` per direction.
        cell: `"gru"` or `"lstm"`.
        num_layers: stacked recurrent layers.
        bidirectional: read the input both ways.
        dropout: dropout on the embedded input.

    Call arguments:
        token_ids: `[B, S]` int ids, 0 = padding.
        training: dropout on or off.

    Returns:
        `{"states": [B, S, D·U], "mask": [B, S] bool, "final": [B, D·U]}`.

    Example:
    >>> import numpy as np, kseq
    >>> encoder = kseq.models.encoders.RnnEncoder(10, embedding_dim=4, units=8)
    >>> memory = encoder(np.array([[4, 5, 0]], "int32"))
    >>> tuple(memory["states"].shape), tuple(memory["final"].shape)
    ((1, 3, 16), (1, 16))
    """

    CONFIG = ("vocabulary_size", "embedding_dim", "units", "cell", "num_layers", "bidirectional",
              "dropout")

    def __init__(self, vocabulary_size, embedding_dim=128, units=128, cell="gru", num_layers=1,
                 bidirectional=True, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        check_choice("cell", cell, sorted(CELLS))
        check_int("num_layers", num_layers)
        store_arguments(self, locals())
        # === Layers ===
        dtype, name = self.dtype_policy, self.name
        self.token_embedding = TokenEmbedding(vocabulary_size, embedding_dim, scale=False,
                                              dtype=dtype, name=f"{name}_token_embedding")
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=dtype, name=f"{name}_dropout")
        self.recurrent_layers = [self._recurrent_layer(i) for i in range(num_layers)]

    def _recurrent_layer(self, index):
        layer = CELLS[self.cell](self.units, return_sequences=True, return_state=True,
                                 dtype=self.dtype_policy, name=f"{self.name}_rnn_{index}")
        if not self.bidirectional:
            return layer
        return keras.layers.Bidirectional(layer, dtype=self.dtype_policy,
                                          name=f"{self.name}_bidirectional_{index}")

    def call(self, token_ids, training=None):
        mask = ops.not_equal(token_ids, 0)
        sequence = self.dropout_layer(self.token_embedding(token_ids), training=training)
        for layer in self.recurrent_layers:
            outputs = layer(sequence, mask=mask, training=training)
            # Bidirectional: sequence, forward (h[, c]), backward (h[, c]); else sequence, h[, c].
            sequence, final = outputs[0], outputs[1:]
        per_direction = len(final) // (2 if self.bidirectional else 1)
        last = [final[0], final[per_direction]] if self.bidirectional else [final[0]]
        return {"states": sequence, "mask": mask, "final": ops.concatenate(last, axis=-1)}


@register_encoder("rnn", builds=RnnEncoder)
def rnn_encoder(vocabulary_size, cell="gru", units=None, embedding_dim=None, hidden_dim=128,
                num_layers=1, bidirectional=True, dropout=0.1, dtype=None, name="encoder"):
    """The catalog's `"rnn"` encoder; `units` and `embedding_dim` default to `hidden_dim`."""
    return RnnEncoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                      units=units or hidden_dim, cell=cell, num_layers=num_layers,
                      bidirectional=bidirectional, dropout=dropout, dtype=dtype, name=name)
