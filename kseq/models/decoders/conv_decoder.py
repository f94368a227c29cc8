"""`ConvDecoder`: the convolutional seq2seq decoder (Gehring et al., 2017).

Shape letters: `B` batch, `S` source length, `T` target length, `E`
embedding width, `H` convolution channels, `V` vocabulary, `k` kernel size,
`N` rows in a search step.
"""

import keras
from keras import ops

from kseq.layers.conv_decoder_block import ConvDecoderBlock
from kseq.layers.checks import check_cache_room
from kseq.models.decoders.decoder import Decoder
from kseq.models.part import embedding_layers, store_arguments
from kseq.models.part_catalog import register_decoder


@keras.saving.register_keras_serializable(package="kseq")
class ConvDecoder(Decoder):
    """Embeddings `g`, causal gated conv blocks each with its own attention, then logits.

    Attends with keys `memory["states"]` `[B, S, E]` and values
    `memory["values"]` (the conv encoder's; other encoders' states serve as
    both). The search state is each block's last `k-1` inputs, so a step costs
    the same at any `t`.

    Args:
        vocabulary_size: target vocabulary `V`.
        embedding_dim: `E`; hidden_dim: `H`; kernel_size: `k` (odd).
        num_layers: decoder blocks.
        dropout: on embeddings, block inputs and before the output projection.
        max_length: longest target (the position table's length).

    Example:
    >>> import numpy as np, kseq
    >>> decoder = kseq.models.decoders.ConvDecoder(10, embedding_dim=4, hidden_dim=8)
    >>> memory = {"states": np.ones((1, 4, 4), "float32"), "mask": np.ones((1, 4), bool)}
    >>> tuple(decoder(np.array([[2, 5, 6]], "int32"), memory).shape)
    (1, 3, 10)
    """

    CONFIG = ("vocabulary_size", "embedding_dim", "hidden_dim", "kernel_size", "num_layers",
              "dropout", "max_length")

    def __init__(self, vocabulary_size, embedding_dim=256, hidden_dim=256, kernel_size=3,
                 num_layers=3, dropout=0.1, max_length=64, **kwargs):
        super().__init__(**kwargs)
        store_arguments(self, locals())
        # === Layers ===
        dtype, name = self.dtype_policy, self.name
        self.token_embedding, self.position_embedding, self.dropout_layer = embedding_layers(
            self, vocabulary_size, embedding_dim, max_length, "learned", False, dropout)
        self.input_projection = keras.layers.Dense(hidden_dim, dtype=dtype, name=f"{name}_in")
        self.blocks = [ConvDecoderBlock(hidden_dim, embedding_dim, kernel_size, dropout,
                                        dtype=dtype, name=f"{name}_block_{i}")
                       for i in range(num_layers)]
        self.state_projection = keras.layers.Dense(embedding_dim, dtype=dtype,
                                                   name=f"{name}_out")
        self.output_projection = keras.layers.Dense(vocabulary_size, dtype=dtype,
                                                    name=f"{name}_output_projection")

    @staticmethod
    def _keys_and_values(memory):
        return memory["states"], memory.get("values", memory["states"])

    def reuse_encoder_layers(self, encoder):
        """The encoder's dropout layer (kseq 0.1 had one for both sides)."""
        self.dropout_layer = encoder.dropout_layer

    def hidden_states(self, decoder_ids, memory, training=None):
        """`[B, T, E]`: the blocks' output in `E`, dropped out, before the output projection."""
        keys, values = self._keys_and_values(memory)
        g = self.token_embedding(decoder_ids)  # [B, T, E]
        g = self.dropout_layer(g + self.position_embedding(g), training=training)
        x = self.input_projection(g)  # [B, T, H]
        for block in self.blocks:
            x, _ = block(x, g, keys, values, memory_mask=memory["mask"], training=training)
        return self.dropout_layer(self.state_projection(x), training=training)

    def project(self, states):
        return ops.cast(self.output_projection(states), "float32")

    def initial_state(self, memory):
        """Zero windows `[B, k-1, H]` per block, and zero attention `[B, S]`."""
        batch = ops.shape(memory["mask"])[0]
        return {"windows": [block.initial_state(batch) for block in self.blocks],
                "attention": ops.zeros(ops.shape(memory["mask"]), dtype="float32")}

    def step(self, token_ids, state, memory, t):
        """Position `t`: `[N]` ids -> `(logits [N, V] float32, state)`."""
        t = check_cache_room(t, self.max_length)  # the position table's length
        keys, values = self._keys_and_values(memory)
        g = self.token_embedding(token_ids) + self.position_embedding.at(t, self.embedding_dim)
        x = self.input_projection(g)  # [N, H]
        windows, weights = [], None
        for block, window in zip(self.blocks, state["windows"]):
            x, window, weights = block.step(x, g, window, keys, values, memory["mask"])
            windows.append(window)
        logits = self.project(self.state_projection(x))
        return logits, {"windows": windows, "attention": ops.cast(weights, "float32")}


@register_decoder("conv", builds=ConvDecoder)
def conv_decoder(vocabulary_size, num_layers=3, num_decoder_layers=None, embedding_dim=None,
                 hidden_dim=256, kernel_size=3, dropout=0.1, max_length=64, dtype=None,
                 name="decoder"):
    """The catalog's `"conv"` decoder: `num_decoder_layers` (a translator's name) wins over
    `num_layers`; `embedding_dim` defaults to `hidden_dim`."""
    return ConvDecoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                       hidden_dim=hidden_dim, kernel_size=kernel_size,
                       num_layers=num_decoder_layers or num_layers, dropout=dropout,
                       max_length=max_length, dtype=dtype, name=name)
