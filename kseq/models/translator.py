"""`Translator`: a Transformer encoder-decoder on the shared step protocol.

Shape letters: `B` batch, `S` source length, `T` target length, `E` width,
`V` target vocabulary, `N` rows in a search step, `L` cache length.
"""

import keras
from keras import ops

from kseq.layers.multi_head_self_attention import check_cache_room
from kseq.layers.position_embedding import LearnedPositionEmbedding, SinusoidalPositionEmbedding
from kseq.layers.token_embedding import TokenEmbedding
from kseq.layers.transformer_decoder_block import TransformerDecoderBlock
from kseq.layers.transformer_encoder_block import TransformerEncoderBlock
from kseq.models.seq2seq_task import Seq2SeqTask

POSITIONS = {"sinusoidal": SinusoidalPositionEmbedding, "learned": LearnedPositionEmbedding}


@keras.saving.register_keras_serializable(package="kseq")
class Translator(Seq2SeqTask):
    """Transformer translator: `{"source_ids", "decoder_ids"} -> logits [B, T, V]`.

    The training graph and `step()` run the same embedding and block layers,
    so step-by-step decoding reproduces the teacher-forced logits. The
    tokenizers' vocabularies are part of the config: a `.keras` file is
    self-contained.

    Args:
        source_tokenizer, target_tokenizer: `kseq.text` tokenizers.
        num_layers: encoder and decoder blocks (each).
        num_heads: attention heads.
        hidden_dim: model width `E`.
        intermediate_dim: feed-forward width.
        dropout: dropout rate.
        max_source_length, max_target_length: longest sequences (target
            includes `<s>`/`</s>`); also the KV cache length `L`.
        share_embeddings: `"decoder"` ties the target embedding and the output
            projection; `"all"` also shares it with the source (same vocabulary
            needed); `"none"`.
        position: `"sinusoidal"` or `"learned"`.
        norm_first: pre-LN (True) or post-LN blocks.
        scale_embeddings: multiply token vectors by `√E` (the original
            Transformer's convention; keras-hub's `TokenAndPositionEmbedding`
            does not).
        embedding_dropout: dropout on the embedded inputs; None means `dropout`.
        activation_dropout: dropout after the feed-forward activation; None
            means `dropout`. keras-hub's blocks have neither of these two
            dropouts: 0 and 0 with `scale_embeddings=False` give its layout.

    Example:
    >>> import numpy as np, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three", "un deux trois"])
    >>> model = kseq.models.Translator(tok, tok, num_layers=1, num_heads=2, hidden_dim=8,
    ...                                intermediate_dim=16, max_source_length=8,
    ...                                max_target_length=8)
    >>> ids = np.array([[4, 5, 0]], "int32")
    >>> tuple(model({"source_ids": ids, "decoder_ids": ids}).shape)
    (1, 3, 10)
    >>> len(model.translate(["one two"], beam_size=2))
    1
    """

    def __init__(self, source_tokenizer, target_tokenizer, num_layers=2, num_heads=4,
                 hidden_dim=128, intermediate_dim=512, dropout=0.1, max_source_length=64,
                 max_target_length=64, share_embeddings="decoder", position="sinusoidal",
                 norm_first=True, scale_embeddings=True, embedding_dropout=None,
                 activation_dropout=None, dtype=None, **kwargs):
        if share_embeddings not in ("decoder", "all", "none"):
            raise ValueError("`share_embeddings` must be 'decoder', 'all' or 'none'. "
                             f"Received: share_embeddings={share_embeddings!r}")
        if share_embeddings == "all" and source_tokenizer.vocabulary != target_tokenizer.vocabulary:
            raise ValueError("share_embeddings='all' needs one vocabulary for both sides. "
                             "Received: two different vocabularies")
        if position not in POSITIONS:
            raise ValueError(f"`position` must be one of {sorted(POSITIONS)}. "
                             f"Received: position={position!r}")
        # === Layers ===
        source_embedding = TokenEmbedding(source_tokenizer.vocabulary_size, hidden_dim,
                                          scale=scale_embeddings, dtype=dtype,
                                          name="source_embedding")
        target_embedding = source_embedding if share_embeddings == "all" else TokenEmbedding(
            target_tokenizer.vocabulary_size, hidden_dim, scale=scale_embeddings, dtype=dtype,
            name="target_embedding")
        longest = max(max_source_length, max_target_length)
        position_embedding = POSITIONS[position](longest, dtype=dtype, name="position_embedding")
        embedding_dropout_rate = dropout if embedding_dropout is None else embedding_dropout
        activation_dropout_rate = dropout if activation_dropout is None else activation_dropout
        embedding_dropout = keras.layers.Dropout(embedding_dropout_rate, dtype=dtype,
                                                 name="embedding_dropout")
        block_args = dict(num_heads=num_heads, intermediate_dim=intermediate_dim,
                          dropout=dropout, norm_first=norm_first,
                          activation_dropout=activation_dropout_rate, dtype=dtype)
        encoder_blocks = [TransformerEncoderBlock(**block_args, name=f"encoder_block_{i}")
                          for i in range(num_layers)]
        decoder_blocks = [TransformerDecoderBlock(**block_args, name=f"decoder_block_{i}")
                          for i in range(num_layers)]
        norm = lambda name: keras.layers.LayerNormalization(epsilon=1e-5, dtype=dtype, name=name)
        encoder_norm = norm("encoder_norm") if norm_first else None
        decoder_norm = norm("decoder_norm") if norm_first else None
        output_projection = None if share_embeddings != "none" else keras.layers.Dense(
            target_tokenizer.vocabulary_size, dtype=dtype, name="output_projection")

        # === Functional graph ===
        source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
        decoder_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_ids")
        parts = dict(
            source_embedding=source_embedding, target_embedding=target_embedding,
            position_embedding=position_embedding, embedding_dropout=embedding_dropout,
            encoder_blocks=encoder_blocks, decoder_blocks=decoder_blocks,
            encoder_norm=encoder_norm, decoder_norm=decoder_norm,
            output_projection=output_projection)
        memory, source_mask = _encode(parts, source_ids, training=None)
        logits = _decode(parts, decoder_ids, memory, source_mask, training=None)
        super().__init__(inputs={"source_ids": source_ids, "decoder_ids": decoder_ids},
                         outputs=logits, **kwargs)

        # === Config ===
        self.parts = parts
        for name, part in parts.items():
            if part is not None and not isinstance(part, list):
                setattr(self, name, part)
        self.encoder_blocks = encoder_blocks
        self.decoder_blocks = decoder_blocks
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length
        self.share_embeddings = share_embeddings
        self.position = position
        self.norm_first = norm_first
        self.scale_embeddings = scale_embeddings
        self.embedding_dropout_rate = embedding_dropout_rate
        self.activation_dropout = activation_dropout_rate

    # === Step protocol ===

    def encode(self, source_ids):
        """`[B, S]` ids -> memory `{"mask", "cross": [per block {"key", "value"}]}`."""
        memory, mask = _encode(self.parts, source_ids, training=False)
        cross = [block.precompute_memory(memory) for block in self.decoder_blocks]
        return {"mask": mask, "cross": cross}

    def initial_state(self, memory):
        """Per-block KV caches of length `max_target_length`, and zero attention `[B, S]`."""
        batch = ops.shape(memory["mask"])[0]
        caches = [b.initial_cache(batch, self.max_target_length) for b in self.decoder_blocks]
        attention = ops.zeros(ops.shape(memory["mask"]), dtype=self.compute_dtype)
        return {"cache": caches, "attention": attention}

    def step(self, token_ids, state, memory, t):
        """One decoding step: `[N]` ids at position `t` -> `(logits [N, V] float32, state)`."""
        p = self.parts
        t = check_cache_room(t, self.max_target_length)
        x = p["target_embedding"](token_ids)  # [N, E]
        x = x + p["position_embedding"].at(t, self.hidden_dim)[None]
        caches, weights = [], None
        for block, cache, cross in zip(self.decoder_blocks, state["cache"], memory["cross"]):
            x, cache, weights = block.step(x, cache, cross, memory["mask"], t)
            caches.append(cache)
        logits = _project(p, x)
        # Heads of the last cross-attention, averaged: [N, S] for coverage and plots.
        attention = ops.cast(ops.mean(weights, axis=1), state["attention"].dtype)
        return logits, {"cache": caches, "attention": attention}

    # === Training hooks (see Seq2SeqTask.train_step) ===

    def decoder_states(self, source_ids, decoder_ids, training=None):
        """The last decoder block's output `[B, T, E]`, before the final norm and projection."""
        memory, source_mask = _encode(self.parts, source_ids, training=training)
        return _decoder_states(self.parts, decoder_ids, memory, source_mask, training=training)

    def project_states(self, states):
        """Float32 logits `[..., V]` of decoder states `[..., E]`."""
        return _project(self.parts, states)

    # === Config ===

    def get_config(self):
        return {
            **self.task_config(),
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "hidden_dim": self.hidden_dim,
            "intermediate_dim": self.intermediate_dim,
            "dropout": self.dropout,
            "max_source_length": self.max_source_length,
            "max_target_length": self.max_target_length,
            "share_embeddings": self.share_embeddings,
            "position": self.position,
            "norm_first": self.norm_first,
            "scale_embeddings": self.scale_embeddings,
            "embedding_dropout": self.embedding_dropout_rate,
            "activation_dropout": self.activation_dropout,
        }


def _embed(parts, embedding, ids, start_index, training):
    x = embedding(ids)
    x = x + parts["position_embedding"](x, start_index=start_index)
    return parts["embedding_dropout"](x, training=training)


def _encode(parts, source_ids, training):
    mask = ops.not_equal(source_ids, 0)
    x = _embed(parts, parts["source_embedding"], source_ids, 0, training)
    for block in parts["encoder_blocks"]:
        x = block(x, padding_mask=mask, training=training)
    if parts["encoder_norm"] is not None:
        x = parts["encoder_norm"](x)
    return x, mask


def _decoder_states(parts, decoder_ids, memory, source_mask, training):
    """The last decoder block's output `[B, T, E]`, before the final norm and projection."""
    decoder_mask = ops.not_equal(decoder_ids, 0)
    x = _embed(parts, parts["target_embedding"], decoder_ids, 0, training)
    for block in parts["decoder_blocks"]:
        x = block(x, memory, memory_mask=source_mask, decoder_mask=decoder_mask,
                  training=training)
    return x


def _decode(parts, decoder_ids, memory, source_mask, training):
    return _project(parts, _decoder_states(parts, decoder_ids, memory, source_mask, training))


def _project(parts, x):
    if parts["decoder_norm"] is not None:
        x = parts["decoder_norm"](x)
    if parts["output_projection"] is not None:
        return ops.cast(parts["output_projection"](x), "float32")
    return ops.cast(parts["target_embedding"].project(x), "float32")
