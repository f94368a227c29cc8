"""`TransformerEncoder`: token ids -> `{"states", "mask"}` through self-attention blocks.

Shape letters: `B` batch, `S` source length, `E` width.
"""

import keras
from keras import ops

from kseq.arguments import check_choice
from kseq.layers.transformer_encoder_block import TransformerEncoderBlock
from kseq.models.part import (POSITIONS, Part, embedding_layers, final_norm, store_arguments,
                              transformer_blocks)
from kseq.models.part_catalog import register_encoder


@keras.saving.register_keras_serializable(package="kseq")
class TransformerEncoder(Part):
    """Token and position embeddings, `num_layers` encoder blocks, a final norm (pre-LN).

    Args:
        vocabulary_size: source vocabulary `V`.
        num_layers: encoder blocks.
        num_heads: attention heads (`hidden_dim` must be divisible by it).
        hidden_dim: width `E`.
        intermediate_dim: feed-forward width.
        dropout: dropout on residual branches and attention weights.
        max_length: longest input `S` (the position table's length).
        position: `"sinusoidal"` or `"learned"`.
        norm_first: pre-LN (True, with a final norm) or post-LN blocks.
        scale_embeddings: multiply token vectors by `√E`.
        embedding_dropout: dropout on the embedded input; None means `dropout`.
        activation_dropout: dropout after the feed-forward activation; None
            means `dropout`.

    Call arguments:
        token_ids: `[B, S]` int ids, 0 = padding.
        training: dropout on or off.

    Returns:
        `{"states": [B, S, E], "mask": [B, S] bool}`.

    Example:
    >>> import numpy as np, kseq
    >>> encoder = kseq.models.encoders.TransformerEncoder(
    ...     10, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16)
    >>> memory = encoder(np.array([[4, 5, 0]], "int32"))
    >>> tuple(memory["states"].shape), memory["mask"].numpy().tolist()
    ((1, 3, 8), [[True, True, False]])
    """

    CONFIG = ("vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim",
              "dropout", "max_length", "position", "norm_first", "scale_embeddings",
              "embedding_dropout", "activation_dropout")

    def __init__(self, vocabulary_size, num_layers=2, num_heads=4, hidden_dim=128,
                 intermediate_dim=512, dropout=0.1, max_length=64, position="sinusoidal",
                 norm_first=True, scale_embeddings=True, embedding_dropout=None,
                 activation_dropout=None, **kwargs):
        super().__init__(**kwargs)
        check_choice("position", position, sorted(POSITIONS))
        store_arguments(self, locals())
        # === Layers ===
        self.token_embedding, self.position_embedding, self.embedding_dropout_layer = (
            embedding_layers(self, vocabulary_size, hidden_dim, max_length, position,
                             scale_embeddings,
                             dropout if embedding_dropout is None else embedding_dropout))
        self.blocks = transformer_blocks(self, TransformerEncoderBlock)
        self.final_norm = final_norm(self)

    def call(self, token_ids, training=None):
        mask = ops.not_equal(token_ids, 0)
        x = self.token_embedding(token_ids)  # [B, S, E]
        x = x + self.position_embedding(x)
        x = self.embedding_dropout_layer(x, training=training)
        for block in self.blocks:
            x = block(x, padding_mask=mask, training=training)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return {"states": x, "mask": mask}


@register_encoder("transformer", builds=TransformerEncoder)
def transformer_encoder(vocabulary_size, num_layers=2, num_heads=4, hidden_dim=128,
                        intermediate_dim=None, dropout=0.1, max_length=64, position="sinusoidal",
                        norm_first=True, scale_embeddings=True, embedding_dropout=None,
                        activation_dropout=None, dtype=None, name="encoder"):
    """The catalog's `"transformer"` encoder; `intermediate_dim=None` means `4·hidden_dim`."""
    return TransformerEncoder(
        vocabulary_size, num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
        intermediate_dim=4 * hidden_dim if intermediate_dim is None else intermediate_dim,
        dropout=dropout, max_length=max_length, position=position, norm_first=norm_first,
        scale_embeddings=scale_embeddings, embedding_dropout=embedding_dropout,
        activation_dropout=activation_dropout, dtype=dtype, name=name)
