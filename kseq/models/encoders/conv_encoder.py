"""`ConvEncoder`: the convolutional seq2seq encoder (Gehring et al., 2017).

Shape letters: `B` batch, `S` source length, `E` embedding width, `H`
convolution channels.
"""

import keras
from keras import ops

from kseq.layers.conv_encoder_block import ConvEncoderBlock
from kseq.layers.gated_convolution import RESIDUAL_SCALE
from kseq.models.part import Part, embedding_layers, store_arguments
from kseq.models.part_catalog import register_encoder


@keras.saving.register_keras_serializable(package="kseq")
class ConvEncoder(Part):
    """Token + learned position embeddings `e`, a projection to `H`, gated conv blocks, back to `E`.

    The output `z` is the attention keys (`"states"`); the values are
    `(z + e)·√½` (`"values"`), as in the paper: keys carry context, values also
    the token itself.

    Args:
        vocabulary_size: source vocabulary.
        embedding_dim: `E`; hidden_dim: `H`.
        kernel_size: odd convolution width.
        num_layers: gated convolution blocks.
        dropout: on the embeddings and each block's input.
        max_length: longest input (the position table's length).

    Call arguments:
        token_ids: `[B, S]` int ids, 0 = padding.
        training: dropout on or off.

    Returns:
        `{"states": [B, S, E], "values": [B, S, E], "mask": [B, S] bool}`.

    Example:
    >>> import numpy as np, kseq
    >>> encoder = kseq.models.encoders.ConvEncoder(10, embedding_dim=4, hidden_dim=8)
    >>> memory = encoder(np.array([[4, 5, 0]], "int32"))
    >>> tuple(memory["states"].shape), tuple(memory["values"].shape)
    ((1, 3, 4), (1, 3, 4))
    """

    CONFIG = ("vocabulary_size", "embedding_dim", "hidden_dim", "kernel_size", "num_layers",
              "dropout", "max_length")

    def __init__(self, vocabulary_size, embedding_dim=256, hidden_dim=256, kernel_size=3,
                 num_layers=4, dropout=0.1, max_length=64, **kwargs):
        super().__init__(**kwargs)
        store_arguments(self, locals())
        # === Layers ===
        dtype, name = self.dtype_policy, self.name
        self.token_embedding, self.position_embedding, self.dropout_layer = embedding_layers(
            self, vocabulary_size, embedding_dim, max_length, "learned", False, dropout)
        self.input_projection = keras.layers.Dense(hidden_dim, dtype=dtype, name=f"{name}_in")
        self.blocks = [ConvEncoderBlock(hidden_dim, kernel_size, dropout, dtype=dtype,
                                        name=f"{name}_block_{i}") for i in range(num_layers)]
        self.output_projection = keras.layers.Dense(embedding_dim, dtype=dtype,
                                                    name=f"{name}_out")

    def call(self, token_ids, training=None):
        mask = ops.not_equal(token_ids, 0)
        e = self.token_embedding(token_ids)  # [B, S, E]
        e = self.dropout_layer(e + self.position_embedding(e), training=training)
        x = self.input_projection(e)  # [B, S, H]
        for block in self.blocks:
            x = block(x, padding_mask=mask, training=training)
        keys = self.output_projection(x)  # [B, S, E]
        return {"states": keys, "values": (keys + e) * RESIDUAL_SCALE, "mask": mask}


@register_encoder("conv", builds=ConvEncoder)
def conv_encoder(vocabulary_size, num_layers=4, num_encoder_layers=None, embedding_dim=None,
                 hidden_dim=256, kernel_size=3, dropout=0.1, max_length=64, dtype=None,
                 name="encoder"):
    """The catalog's `"conv"` encoder: `num_encoder_layers` (a translator's name, beside its
    `num_decoder_layers`) wins over `num_layers`; `embedding_dim` defaults to `hidden_dim`."""
    return ConvEncoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                       hidden_dim=hidden_dim, kernel_size=kernel_size,
                       num_layers=num_encoder_layers or num_layers, dropout=dropout,
                       max_length=max_length, dtype=dtype, name=name)
