"""`TransformerDecoder`: causal self-attention + cross-attention blocks, with a KV cache.

Shape letters: `B` batch, `S` source length, `T` target length, `E` width,
`V` vocabulary, `N` rows in a search step, `L` `max_length` (the cache).
"""

import keras
from keras import ops

from kseq.arguments import check_choice
from kseq.layers.checks import check_cache_room
from kseq.layers.transformer_decoder_block import TransformerDecoderBlock
from kseq.models.decoders.decoder import Decoder
from kseq.models.part import (POSITIONS, embedding_layers, final_norm, store_arguments,
                              transformer_blocks)
from kseq.models.part_catalog import register_decoder


@keras.saving.register_keras_serializable(package="kseq")
class TransformerDecoder(Decoder):
    """Token and position embeddings, `num_layers` decoder blocks, a final norm, logits.

    Reads `memory["states"]` `[B, S, E]` and `memory["mask"]` `[B, S]`.

    Args:
        vocabulary_size: target vocabulary `V`.
        num_layers, num_heads, hidden_dim, intermediate_dim, dropout, position,
            norm_first, scale_embeddings, embedding_dropout, activation_dropout:
            as for `TransformerEncoder`.
        max_length: longest target `T` (with `<s>`/`</s>`); the KV cache's length.
        tie_embeddings: the output projection is the token embedding's
            transpose (True) or a `Dense` layer of its own.
        cross_attention: attend to `memory["states"]`; False makes a
            decoder-only language model, whose memory is `{"mask": [B, 0]}`
            (no source: `hidden_states` also takes `memory=None`).

    Example:
    >>> import numpy as np, kseq
    >>> decoder = kseq.models.decoders.TransformerDecoder(
    ...     10, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16, max_length=8)
    >>> memory = {"states": np.ones((1, 4, 8), "float32"), "mask": np.ones((1, 4), bool)}
    >>> ids = np.array([[2, 5, 6]], "int32")
    >>> forward = decoder(ids, memory).numpy()
    >>> prepared = decoder.prepare(memory)
    >>> state = decoder.initial_state(prepared)
    >>> steps = []
    >>> for t in range(3):
    ...     logits, state = decoder.step(ids[:, t], state, prepared, t)
    ...     steps.append(logits.numpy())
    >>> bool(np.allclose(np.stack(steps, 1), forward, atol=1e-5))
    True
    """

    CONFIG = ("vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim",
              "dropout", "max_length", "position", "norm_first", "scale_embeddings",
              "embedding_dropout", "activation_dropout", "tie_embeddings", "cross_attention")

    def __init__(self, vocabulary_size, num_layers=2, num_heads=4, hidden_dim=128,
                 intermediate_dim=512, dropout=0.1, max_length=64, position="sinusoidal",
                 norm_first=True, scale_embeddings=True, embedding_dropout=None,
                 activation_dropout=None, tie_embeddings=True, cross_attention=True, **kwargs):
        super().__init__(**kwargs)
        check_choice("position", position, sorted(POSITIONS))
        store_arguments(self, locals())
        # === Layers ===
        self.token_embedding, self.position_embedding, self.embedding_dropout_layer = (
            embedding_layers(self, vocabulary_size, hidden_dim, max_length, position,
                             scale_embeddings,
                             dropout if embedding_dropout is None else embedding_dropout))
        self.blocks = transformer_blocks(self, TransformerDecoderBlock,
                                         cross_attention=cross_attention)
        self.final_norm = final_norm(self)
        self.output_projection = None if tie_embeddings else keras.layers.Dense(
            vocabulary_size, dtype=self.dtype_policy, name=f"{self.name}_output_projection")

    def share_token_embedding(self, embedding):
        """Reads and projects with `embedding` (e.g. the encoder's: one table for both sides).

        Call before the decoder is first used; the caller owns the choice (a
        `Translator` records it in its own config).
        """
        self.check_shared_embedding(embedding, self.hidden_dim)
        self.token_embedding = embedding

    def reuse_encoder_layers(self, encoder):
        """The encoder's position embedding (its table must be as long) and embedding dropout."""
        if encoder.max_length < self.max_length:
            raise ValueError("A shared position table must hold the decoder's positions. "
                             f"Received: encoder max_length={encoder.max_length}, decoder "
                             f"max_length={self.max_length}")
        self.position_embedding = encoder.position_embedding
        self.embedding_dropout_layer = encoder.embedding_dropout_layer

    def prepare(self, memory):
        """`{"mask", "cross"}`: each block's cross-attention keys and values, computed once."""
        if not self.cross_attention:
            return {"mask": memory["mask"], "cross": [None] * self.num_layers}
        cross = [block.project_memory(memory["states"]) for block in self.blocks]
        return {"mask": memory["mask"], "cross": cross}

    def hidden_states(self, decoder_ids, memory=None, training=None):
        """The last block's output `[B, T, E]`, before the final norm and the projection."""
        decoder_mask = ops.not_equal(decoder_ids, 0)
        states, mask = (memory["states"], memory["mask"]) if self.cross_attention else (None, None)
        x = self.token_embedding(decoder_ids)  # [B, T, E]
        x = self.embedding_dropout_layer(x + self.position_embedding(x), training=training)
        for block in self.blocks:
            x = block(x, states, memory_mask=mask, decoder_mask=decoder_mask, training=training)
        return x

    def project(self, states):
        """Float32 logits `[..., V]` of states `[..., E]`."""
        if self.final_norm is not None:
            states = self.final_norm(states)
        if self.output_projection is not None:
            return ops.cast(self.output_projection(states), "float32")
        return ops.cast(self.token_embedding.project(states), "float32")

    #: Slots a growing KV cache (`growing_state`) starts with and adds at a time.
    CACHE_BLOCK = 16

    def initial_state(self, memory, cache_length=None):
        """Per-block KV caches of length `cache_length` (default and at most `max_length`),
        and zero attention `[B, S]`. A shorter cache grows in `step` as `t` reaches it."""
        batch = ops.shape(memory["mask"])[0]
        length = self.max_length if cache_length is None else min(cache_length, self.max_length)
        caches = [block.initial_state(batch, length) for block in self.blocks]
        attention = ops.zeros(ops.shape(memory["mask"]), dtype=self.compute_dtype)
        return {"cache": caches, "attention": attention}

    def growing_state(self, memory):
        """`(state, shapes)`: a first state whose KV caches hold `CACHE_BLOCK` slots and
        grow by as many whenever the step reaches them, and the state's shapes in a
        search loop (`keras.KerasTensor`s; the cache length `L` unknown).

        A search given both does the work its longest row so far needs: the step
        attends over, and beam search reorders, `L` slots instead of `max_length`,
        with the same ids (masked slots weigh exactly zero; scores may differ in the
        last float32 bit). Not for XLA, which needs fixed loop shapes.
        """
        state = self.initial_state(memory, cache_length=self.CACHE_BLOCK)
        loose = lambda x, axes: keras.KerasTensor(
            [None if axis in axes else size for axis, size in enumerate(x.shape)], x.dtype)
        shapes = {"cache": [{name: loose(x, (0, 2)) for name, x in cache.items()}
                            for cache in state["cache"]],
                  "attention": loose(state["attention"], (0, 1))}
        return state, shapes

    def _grown_caches(self, caches, t):
        """The caches with room for position `t`: a cache shorter than `max_length` (from
        `growing_state`) grows to the next multiple of `CACHE_BLOCK` when `t` reaches it."""
        if all(cache["key"].shape[2] == self.max_length for cache in caches):
            return caches  # a fixed cache: no growth code in the graph
        length = ops.minimum((t // self.CACHE_BLOCK + 1) * self.CACHE_BLOCK, self.max_length)
        grow = lambda: [block.self_attention.grow_cache(cache, length)
                        for block, cache in zip(self.blocks, caches)]
        return ops.cond(t < ops.shape(caches[0]["key"])[2], lambda: list(caches), grow)

    def prefill(self, input_ids, state, memory):
        """Positions `0 .. P-1` in one pass: `input_ids [B, P]` (all real, `P` may be 0) ->
        the state `P` calls of `step` would give (a growing cache grows to hold them first;
        see `kseq.decoding.prompts`)."""
        length = ops.shape(input_ids)[1]
        caches = self._grown_caches(state["cache"], length - 1)
        x = self.token_embedding(input_ids)  # [B, P, E]
        x = x + self.position_embedding(x)
        new_caches = []
        for block, cache, cross in zip(self.blocks, caches, memory["cross"]):
            x, cache = block.prefill(x, cache, cross, memory["mask"])
            new_caches.append(cache)
        return {**state, "cache": new_caches}

    def step(self, token_ids, state, memory, t):
        """Position `t`: `[N]` ids -> `(logits [N, V] float32, state)`; `memory` is prepared."""
        t = check_cache_room(t, self.max_length)
        state = {**state, "cache": self._grown_caches(state["cache"], t)}
        x = self.token_embedding(token_ids)  # [N, E]
        x = x + self.position_embedding.at(t, self.hidden_dim)[None]
        caches, weights = [], None
        for block, cache, cross in zip(self.blocks, state["cache"], memory["cross"]):
            x, cache, weights = block.step(x, cache, cross, memory["mask"], t)
            caches.append(cache)
        # Heads of the last cross-attention, averaged: [N, S] for coverage and plots.
        attention = state["attention"] if weights is None else ops.cast(
            ops.mean(weights, axis=1), state["attention"].dtype)
        return self.project(x), {"cache": caches, "attention": attention}


@register_decoder("transformer", builds=TransformerDecoder)
def transformer_decoder(vocabulary_size, num_layers=2, num_heads=4, hidden_dim=128,
                        intermediate_dim=None, dropout=0.1, max_length=64, position="sinusoidal",
                        norm_first=True, scale_embeddings=True, embedding_dropout=None,
                        activation_dropout=None, tie_embeddings=True, dtype=None,
                        name="decoder"):
    """The catalog's `"transformer"` decoder (cross-attention); `intermediate_dim=None` means
    `4·hidden_dim`."""
    return TransformerDecoder(
        vocabulary_size, num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
        intermediate_dim=4 * hidden_dim if intermediate_dim is None else intermediate_dim,
        dropout=dropout, max_length=max_length, position=position, norm_first=norm_first,
        scale_embeddings=scale_embeddings, embedding_dropout=embedding_dropout,
        activation_dropout=activation_dropout, tie_embeddings=tie_embeddings, dtype=dtype,
        name=name)
