"""`RnnDecoder`: a GRU/LSTM decoder with one fixed context vector or with attention.

- `attention=None`: the classic Sutskever/Cho decoder: the context (a bridge of
  the encoder's `"final"`) is fed with every input token, and starts each
  layer's state;
- `attention="bahdanau"|"luong"`: one `AttentionDecoder` cell (input feeding)
  over a projection of the encoder's `"states"`, started from the bridge.

Shape letters: `B` batch, `S` source length, `T` target length, `E`
embedding width, `U` units, `V` vocabulary, `N` rows in a search step.
"""

import keras
from keras import ops

from kseq.arguments import check_choice, check_int
from kseq.layers.attention_decoder import AttentionDecoder
from kseq.layers.token_embedding import TokenEmbedding
from kseq.models.decoders.decoder import Decoder
from kseq.models.part import store_arguments
from kseq.models.part_catalog import register_decoder
from kseq.models.encoders.rnn_encoder import CELLS

ATTENTIONS = (None, "bahdanau", "luong")


def _suffix(layer):
    return f"_{layer}" if layer else ""


@keras.saving.register_keras_serializable(package="kseq")
class RnnDecoder(Decoder):
    """Reads `memory["final"]` (the bridge) and, with attention, `memory["states"]`/`["mask"]`.

    Args:
        vocabulary_size: target vocabulary `V`.
        embedding_dim: `E`; units: `U`.
        cell: `"gru"` or `"lstm"`.
        num_layers: stacked layers (1 with attention: one attention cell).
        attention: None, `"bahdanau"` or `"luong"`.
        dropout: on the embedded inputs.
        reads_memory: False makes a language model: no memory (`{"mask": [B, 0]}`, or
            None in `hidden_states`), zero start states, no context (needs
            `attention=None`).
        tie_embeddings: the output projection is the token embedding's transpose
            (after a `Dense` to `embedding_dim` when `units` differs).

    Example:
    >>> import numpy as np, kseq
    >>> decoder = kseq.models.decoders.RnnDecoder(10, embedding_dim=4, units=8,
    ...                                           attention="luong")
    >>> memory = {"states": np.ones((1, 4, 6), "float32"), "mask": np.ones((1, 4), bool),
    ...           "final": np.ones((1, 6), "float32")}
    >>> tuple(decoder(np.array([[2, 5, 6]], "int32"), memory).shape)
    (1, 3, 10)
    """

    CONFIG = ("vocabulary_size", "embedding_dim", "units", "cell", "num_layers", "attention",
              "dropout", "reads_memory", "tie_embeddings")

    def __init__(self, vocabulary_size, embedding_dim=128, units=128, cell="gru", num_layers=1,
                 attention="bahdanau", dropout=0.1, reads_memory=True, tie_embeddings=False,
                 **kwargs):
        super().__init__(**kwargs)
        check_choice("cell", cell, sorted(CELLS))
        check_choice("attention", attention, ATTENTIONS)
        check_int("num_layers", num_layers, maximum=1 if attention else None)
        if attention and not reads_memory:
            raise ValueError("An attention decoder reads a memory: reads_memory=False needs "
                             f"attention=None. Received: attention={attention!r}")
        store_arguments(self, locals())
        # === Layers ===
        dtype, name = self.dtype_policy, self.name
        dense = lambda units, suffix, **options: keras.layers.Dense(
            units, dtype=dtype, name=f"{name}_{suffix}", **options)
        self.memory_projection = dense(units, "memory_projection") if attention else None
        self.bridge = dense(units, "bridge", activation="tanh") if reads_memory else None
        self.token_embedding = TokenEmbedding(vocabulary_size, embedding_dim, scale=False,
                                              dtype=dtype, name=f"{name}_token_embedding")
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=dtype, name=f"{name}_dropout")
        if attention:
            self.recurrent_layers = [AttentionDecoder(units, cell=cell, attention=attention,
                                                      dtype=dtype, name=f"{name}_attention")]
        else:
            self.recurrent_layers = [
                CELLS[cell](units, return_sequences=True, return_state=True, dtype=dtype,
                            name=f"{name}_rnn{_suffix(i)}") for i in range(num_layers)]
        if not tie_embeddings:
            self.output_projection = dense(vocabulary_size, "output_projection")
        else:  # through the token embedding's table, from its width
            self.output_projection = None if units == embedding_dim else dense(
                embedding_dim, "output_bottleneck")

    def share_token_embedding(self, embedding):
        """Reads with `embedding` (the encoder's: one table for both sides of a shared
        vocabulary); the output projection stays the decoder's own. Call before the decoder
        is first used; the caller records the choice (`Translator` does, in its config)."""
        self.check_shared_embedding(embedding, self.embedding_dim)
        self.token_embedding = embedding

    # --- the memory, shared by the teacher-forced graph and `prepare` ---

    def _bridged(self, memory):
        """Attended states `[B, S, U]` (attention) and the start state from `"final"`."""
        # The projection runs before the bridge: models saved before the parts
        # existed list their layers in this order.
        attended = self.memory_projection(memory["states"]) if self.attention else None
        if self.reads_memory:
            h0 = self.bridge(memory["final"])  # [B, U]
        else:  # a language model starts from zeros
            h0 = ops.zeros((ops.shape(memory["mask"])[0], self.units), self.compute_dtype)
        initial = {}
        for layer in range(1 if self.attention else self.num_layers):
            initial["h" + _suffix(layer)] = h0
            if self.cell == "lstm":
                initial["c" + _suffix(layer)] = ops.zeros_like(h0)
        if self.attention:
            initial["feed"] = ops.zeros_like(h0)
        return attended, h0, initial

    def _layer_state(self, state, layer):
        """Decoder layer `layer`'s recurrent state, as Keras's GRU/LSTM take it."""
        keys = ["h", "c"] if self.cell == "lstm" else ["h"]
        return [state[key + _suffix(layer)] for key in keys]

    def reuse_encoder_layers(self, encoder):
        """The encoder's dropout layer (kseq 0.1 had one for both sides)."""
        self.dropout_layer = encoder.dropout_layer

    def prepare(self, memory):
        """What a step reads: the start state, and attended states and keys (or the context)."""
        attended, h0, initial = self._bridged(memory)
        prepared = {"mask": memory["mask"], "initial_state": initial}
        if self.attention:
            prepared["attended"] = attended
            prepared["keys"] = self.recurrent_layers[0].project_memory(attended)
        elif self.reads_memory:
            prepared["context"] = h0  # the fixed context vector
        return prepared

    def hidden_states(self, decoder_ids, memory, training=None):
        """`[B, T, U]` top decoder outputs, before the output projection."""
        if not self.reads_memory:  # zero start states (Keras's default), no context
            h = self.dropout_layer(self.token_embedding(decoder_ids), training=training)
            for rnn in self.recurrent_layers:
                h = rnn(h, training=training)[0]
            return h
        # The memory's layers first: models saved before the parts existed list their
        # layers in this order.
        attended, h0, initial = self._bridged(memory)
        x = self.dropout_layer(self.token_embedding(decoder_ids), training=training)
        if self.attention:
            return self.recurrent_layers[0](x, attended, memory_mask=memory["mask"],
                                            initial_state=initial, training=training)
        # [B, U] -> [B, T, U]: broadcast against the time axis of x.
        h = ops.concatenate([x, h0[:, None, :] * ops.ones_like(x[..., :1])], -1)
        for layer, rnn in enumerate(self.recurrent_layers):
            h = rnn(h, initial_state=self._layer_state(initial, layer), training=training)[0]
        return h

    def project(self, states):
        if not self.tie_embeddings:
            return ops.cast(self.output_projection(states), "float32")
        if self.output_projection is not None:
            states = self.output_projection(states)
        return ops.cast(self.token_embedding.project(states), "float32")

    def initial_state(self, memory):
        state = dict(memory["initial_state"])
        state["attention"] = ops.zeros(ops.shape(memory["mask"]), dtype="float32")
        return state

    def step(self, token_ids, state, memory, t):
        """`[N]` ids -> `(logits [N, V] float32, state)`; `t` is unused (the state carries it)."""
        x = self.token_embedding(token_ids)  # [N, E]
        new_state = {}
        if self.attention:
            cell_state = {k: v for k, v in state.items() if k != "attention"}
            h, cell_state, weights = self.recurrent_layers[0].step(
                x, cell_state, memory["attended"], memory["keys"], memory["mask"])
            new_state.update(cell_state)
            new_state["attention"] = ops.cast(weights, "float32")
        else:
            # [N, 1, E+U], or [N, 1, E] without a memory
            h = (ops.concatenate([x, memory["context"]], -1) if self.reads_memory else x)[:, None]
            for layer, rnn in enumerate(self.recurrent_layers):
                outputs = rnn(h, initial_state=self._layer_state(state, layer))
                h = outputs[0]
                new_state["h" + _suffix(layer)] = outputs[1]
                if self.cell == "lstm":
                    new_state["c" + _suffix(layer)] = outputs[2]
            h = h[:, 0]
            new_state["attention"] = state["attention"]
        return self.project(h), new_state


@register_decoder("rnn", builds=RnnDecoder)
def rnn_decoder(vocabulary_size, cell="gru", units=None, embedding_dim=None, hidden_dim=128,
                num_layers=1, dropout=0.1, dtype=None, name="decoder"):
    """The catalog's `"rnn"` decoder: one fixed context (no attention), `num_layers`
    stacked; `units` and `embedding_dim` default to `hidden_dim`."""
    return RnnDecoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                      units=units or hidden_dim, cell=cell, num_layers=num_layers,
                      attention=None, dropout=dropout, dtype=dtype, name=name)


@register_decoder("attention", builds=RnnDecoder)
def attention_decoder(vocabulary_size, cell="gru", units=None, embedding_dim=None,
                      hidden_dim=128, attention="bahdanau", dropout=0.1, dtype=None,
                      name="decoder"):
    """The catalog's `"attention"` decoder: one attention cell (`"bahdanau"` or `"luong"`)
    with input feeding; `units` and `embedding_dim` default to `hidden_dim`."""
    return RnnDecoder(vocabulary_size, embedding_dim=embedding_dim or hidden_dim,
                      units=units or hidden_dim, cell=cell, num_layers=1, attention=attention,
                      dropout=dropout, dtype=dtype, name=name)
