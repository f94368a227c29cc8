"""`ConvTranslator`: the convolutional seq2seq model (Gehring et al., 2017) on the step protocol.

Shape letters: `B` batch, `S` source length, `T` target length, `E`
embedding width, `H` convolution channels, `V` target vocabulary, `k` kernel
size, `N` rows in a search step.
"""

import keras
from keras import ops

from kseq.layers.conv_decoder_block import ConvDecoderBlock
from kseq.layers.conv_encoder_block import ConvEncoderBlock
from kseq.layers.gated_convolution import RESIDUAL_SCALE
from kseq.layers.multi_head_self_attention import check_cache_room
from kseq.layers.position_embedding import LearnedPositionEmbedding
from kseq.layers.token_embedding import TokenEmbedding
from kseq.models.seq2seq_task import Seq2SeqTask


@keras.saving.register_keras_serializable(package="kseq")
class ConvTranslator(Seq2SeqTask):
    """Conv encoder-decoder: `{"source_ids", "decoder_ids"} -> logits [B, T, V]`.

    Encoder: token + learned position embeddings (`e`), a projection to `H`,
    `num_encoder_layers` gated-convolution blocks, a projection back to `E`
    (`z`). Keys are `z`, values `(z + e)·√½`. Decoder: the same embedding of
    the target (`g`), `num_decoder_layers` causal blocks, each with its own
    attention, then `E` and the output projection. Decoding state is the last
    `k-1` inputs of every decoder block, so a step costs the same at any `t`.

    Args:
        source_tokenizer, target_tokenizer: `kseq.text` tokenizers.
        num_encoder_layers, num_decoder_layers: block counts.
        embedding_dim: `E`; hidden_dim: `H`; kernel_size: `k` (odd).
        dropout: on embeddings, block inputs and before the output projection.
        max_source_length, max_target_length: sizes of the position tables.

    Example:
    >>> import numpy as np, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    >>> model = kseq.models.ConvTranslator(tok, tok, embedding_dim=8, hidden_dim=16)
    >>> ids = np.array([[4, 5, 0]], "int32")
    >>> tuple(model({"source_ids": ids, "decoder_ids": ids}).shape)
    (1, 3, 7)
    """

    def __init__(self, source_tokenizer, target_tokenizer, num_encoder_layers=4,
                 num_decoder_layers=3, embedding_dim=256, hidden_dim=256, kernel_size=3,
                 dropout=0.1, max_source_length=64, max_target_length=64, dtype=None,
                 **kwargs):
        # === Layers ===
        def dense(units, name):
            return keras.layers.Dense(units, dtype=dtype, name=name)

        parts = {
            "source_embedding": TokenEmbedding(source_tokenizer.vocabulary_size, embedding_dim,
                                               scale=False, dtype=dtype, name="source_embedding"),
            "target_embedding": TokenEmbedding(target_tokenizer.vocabulary_size, embedding_dim,
                                               scale=False, dtype=dtype, name="target_embedding"),
            "source_position": LearnedPositionEmbedding(max_source_length, dtype=dtype,
                                                        name="source_position"),
            "target_position": LearnedPositionEmbedding(max_target_length, dtype=dtype,
                                                        name="target_position"),
            "dropout": keras.layers.Dropout(dropout, dtype=dtype, name="dropout"),
            "encoder_in": dense(hidden_dim, "encoder_in"),
            "encoder_out": dense(embedding_dim, "encoder_out"),
            "decoder_in": dense(hidden_dim, "decoder_in"),
            "decoder_out": dense(embedding_dim, "decoder_out"),
            "output_projection": dense(target_tokenizer.vocabulary_size, "output_projection"),
            "encoder_blocks": [ConvEncoderBlock(hidden_dim, kernel_size, dropout, dtype=dtype,
                                                name=f"encoder_block_{i}")
                               for i in range(num_encoder_layers)],
            "decoder_blocks": [ConvDecoderBlock(hidden_dim, embedding_dim, kernel_size, dropout,
                                                dtype=dtype, name=f"decoder_block_{i}")
                               for i in range(num_decoder_layers)],
        }

        # === Functional graph ===
        source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
        decoder_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_ids")
        memory = _encode(parts, source_ids, training=None)
        logits = _decode(parts, decoder_ids, memory, training=None)
        super().__init__(inputs={"source_ids": source_ids, "decoder_ids": decoder_ids},
                         outputs=logits, **kwargs)

        # === Config ===
        self.parts = parts
        for name, part in parts.items():
            setattr(self, name, part)
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.num_encoder_layers = num_encoder_layers
        self.num_decoder_layers = num_decoder_layers
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.kernel_size = kernel_size
        self.dropout_rate = dropout
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length

    # === Step protocol ===

    def encode(self, source_ids):
        """`[B, S]` -> memory `{"mask" [B, S], "keys", "values" [B, S, E]}`."""
        return _encode(self.parts, source_ids, training=False)

    def initial_state(self, memory):
        """Zero windows `[B, k-1, H]` per decoder block, and zero attention `[B, S]`."""
        batch = ops.shape(memory["mask"])[0]
        windows = [block.initial_window(batch) for block in self.parts["decoder_blocks"]]
        return {"windows": windows,
                "attention": ops.zeros(ops.shape(memory["mask"]), dtype="float32")}

    def step(self, token_ids, state, memory, t):
        """One position `t`: `[N]` ids -> `(logits [N, V] float32, state)`."""
        p = self.parts
        t = check_cache_room(t, self.max_target_length)  # the position table's length
        g = p["target_embedding"](token_ids) + p["target_position"].at(t, self.embedding_dim)
        x = p["decoder_in"](g)  # [N, H]
        windows, weights = [], None
        for block, window in zip(p["decoder_blocks"], state["windows"]):
            x, window, weights = block.step(x, g, window, memory["keys"], memory["values"],
                                            memory["mask"])
            windows.append(window)
        logits = _project(p, p["decoder_out"](x))
        return logits, {"windows": windows, "attention": ops.cast(weights, "float32")}

    # === Training hooks (see Seq2SeqTask.train_step) ===

    def decoder_states(self, source_ids, decoder_ids, training=None):
        """`[B, T, E]` decoder outputs before the output projection."""
        memory = _encode(self.parts, source_ids, training=training)
        return _decoder_states(self.parts, decoder_ids, memory, training=training)

    def project_states(self, states):
        """Float32 logits `[..., V]` of decoder outputs `[..., E]`."""
        return _project(self.parts, states)

    def get_config(self):
        return {
            **self.task_config(),
            "num_encoder_layers": self.num_encoder_layers,
            "num_decoder_layers": self.num_decoder_layers,
            "embedding_dim": self.embedding_dim, "hidden_dim": self.hidden_dim,
            "kernel_size": self.kernel_size, "dropout": self.dropout_rate,
            "max_source_length": self.max_source_length,
            "max_target_length": self.max_target_length,
        }


def _embed(parts, embedding, position, ids, training):
    e = embedding(ids)
    return parts["dropout"](e + position(e), training=training)


def _encode(parts, source_ids, training):
    mask = ops.not_equal(source_ids, 0)
    e = _embed(parts, parts["source_embedding"], parts["source_position"], source_ids, training)
    x = parts["encoder_in"](e)  # [B, S, H]
    for block in parts["encoder_blocks"]:
        x = block(x, padding_mask=mask, training=training)
    keys = parts["encoder_out"](x)  # [B, S, E]
    return {"mask": mask, "keys": keys, "values": (keys + e) * RESIDUAL_SCALE}


def _decoder_states(parts, decoder_ids, memory, training):
    """`[B, T, E]`: the decoder's output, dropped out, just before the output projection."""
    g = _embed(parts, parts["target_embedding"], parts["target_position"], decoder_ids, training)
    x = parts["decoder_in"](g)  # [B, T, H]
    for block in parts["decoder_blocks"]:
        x, _ = block(x, g, memory["keys"], memory["values"], memory_mask=memory["mask"],
                     training=training)
    return parts["dropout"](parts["decoder_out"](x), training=training)


def _decode(parts, decoder_ids, memory, training):
    return _project(parts, _decoder_states(parts, decoder_ids, memory, training))


def _project(parts, states):
    """Float32 logits `[..., V]` of decoder outputs `[..., E]`: training, graph and step share it."""
    return ops.cast(parts["output_projection"](states), "float32")
