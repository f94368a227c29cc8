"""`RnnTranslator`: recurrent encoder-decoder translators on the shared step protocol.

- `arch="rnn"`: the classic Sutskever/Cho model — the decoder sees one fixed
  context vector (the encoder's final state) at every step;
- `arch="attention"`: an `AttentionDecoder` (Bahdanau or Luong, input feeding)
  over all encoder states.

Shape letters: `B` batch, `S` source length, `T` target length, `E` embedding
width, `U` units, `V` target vocabulary, `N` rows in a search step.
"""

import keras
from keras import ops

from kseq.layers.attention_decoder import AttentionDecoder
from kseq.layers.token_embedding import TokenEmbedding
from kseq.models.seq2seq_task import Seq2SeqTask

ARCHS = ("rnn", "attention")


def _suffix(layer):
    return f"_{layer}" if layer else ""


def _rnn(cell, units, name, dtype, return_sequences=True):
    layer = keras.layers.GRU if cell == "gru" else keras.layers.LSTM
    return layer(units, return_sequences=return_sequences, return_state=True, dtype=dtype,
                 name=name)


@keras.saving.register_keras_serializable(package="kseq")
class RnnTranslator(Seq2SeqTask):
    """GRU/LSTM translator: `{"source_ids", "decoder_ids"} -> logits [B, T, V]`.

    The encoder is a stack of `num_layers` bidirectional layers (the top
    layer's two directions are concatenated and projected to `U`); the decoder
    starts from a projection of the encoder's final states. With `arch="rnn"`
    the decoder is a stack of `num_layers` layers too, each starting from that
    projection; the attention decoder is one attention cell.

    Args:
        source_tokenizer, target_tokenizer: `kseq.text` tokenizers.
        arch: `"rnn"` or `"attention"`.
        cell: `"gru"` or `"lstm"`.
        units: `U`; embedding_dim: `E`.
        num_layers: stacked recurrent layers (encoder; and decoder for `rnn`).
        attention: `"bahdanau"` or `"luong"` (attention arch).
        dropout: dropout on embeddings and decoder inputs.
        max_source_length, max_target_length: longest sequences.

    Example:
    >>> import numpy as np, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    >>> model = kseq.models.RnnTranslator(tok, tok, arch="attention", units=8, embedding_dim=8)
    >>> ids = np.array([[4, 5, 0]], "int32")
    >>> tuple(model({"source_ids": ids, "decoder_ids": ids}).shape)
    (1, 3, 7)
    """

    def __init__(self, source_tokenizer, target_tokenizer, arch="attention", cell="gru",
                 units=128, embedding_dim=128, attention="bahdanau", dropout=0.1,
                 max_source_length=64, max_target_length=64, num_layers=1, dtype=None,
                 **kwargs):
        if arch not in ARCHS:
            raise ValueError(f"`arch` must be one of {ARCHS}. Received: arch={arch!r}")
        if num_layers < 1:
            raise ValueError(f"`num_layers` must be >= 1. Received: num_layers={num_layers}")
        # === Layers ===
        source_embedding = TokenEmbedding(source_tokenizer.vocabulary_size, embedding_dim,
                                          scale=False, dtype=dtype, name="source_embedding")
        target_embedding = TokenEmbedding(target_tokenizer.vocabulary_size, embedding_dim,
                                          scale=False, dtype=dtype, name="target_embedding")
        # Layer 0 keeps the one-layer names, so older saved models still load.
        encoders = [keras.layers.Bidirectional(
            _rnn(cell, units, "encoder_forward" + _suffix(i), dtype), dtype=dtype,
            name="encoder" + _suffix(i)) for i in range(num_layers)]
        memory_projection = keras.layers.Dense(units, dtype=dtype, name="memory_projection") \
            if arch == "attention" else None
        bridge = keras.layers.Dense(units, activation="tanh", dtype=dtype, name="bridge")
        dropout_layer = keras.layers.Dropout(dropout, dtype=dtype, name="dropout")
        if arch == "attention":
            decoders = [AttentionDecoder(units, cell=cell, attention=attention, dtype=dtype,
                                         name="decoder")]
        else:
            decoders = [_rnn(cell, units, "decoder" + _suffix(i), dtype)
                        for i in range(num_layers)]
        output_projection = keras.layers.Dense(target_tokenizer.vocabulary_size, dtype=dtype,
                                               name="output_projection")
        parts = dict(source_embedding=source_embedding, target_embedding=target_embedding,
                     encoders=encoders, memory_projection=memory_projection, bridge=bridge,
                     dropout=dropout_layer, decoders=decoders,
                     output_projection=output_projection)

        # === Functional graph ===
        source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
        decoder_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_ids")
        self_ = _Parts(parts, arch, cell, units)
        memory = self_.encode(source_ids, training=None)
        logits = self_.decode(decoder_ids, memory, training=None)
        super().__init__(inputs={"source_ids": source_ids, "decoder_ids": decoder_ids},
                         outputs=logits, **kwargs)

        # === Config ===
        self.parts = parts
        self.graph_parts = self_
        for name, part in parts.items():
            if part is not None:
                setattr(self, name, part)
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.arch = arch
        self.cell = cell
        self.units = units
        self.embedding_dim = embedding_dim
        self.attention = attention
        self.dropout_rate = dropout
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length
        self.num_layers = num_layers

    # === Step protocol ===

    def encode(self, source_ids):
        """`[B, S]` -> memory `{"mask", "states" [B, S, U], "keys", "initial" [B, U]...}`."""
        return self.graph_parts.encode(source_ids, training=False, for_search=True)

    def initial_state(self, memory):
        state = dict(memory["initial_state"])
        state["attention"] = ops.zeros(ops.shape(memory["mask"]), dtype="float32")
        return state

    def step(self, token_ids, state, memory, t):
        """`[N]` ids -> `(logits [N, V] float32, state)`; `t` is unused (RNN state carries it)."""
        return self.graph_parts.step(token_ids, state, memory)

    # === Training hooks (see Seq2SeqTask.train_step) ===

    def decoder_states(self, source_ids, decoder_ids, training=None):
        """`[B, T, U]` top decoder outputs before the output projection."""
        memory = self.graph_parts.encode(source_ids, training)
        return self.graph_parts.decoder_states(decoder_ids, memory, training)

    def project_states(self, states):
        """Float32 logits `[..., V]` of decoder outputs `[..., U]`."""
        return self.graph_parts.project(states)

    def get_config(self):
        return {
            **self.task_config(),
            "arch": self.arch, "cell": self.cell, "units": self.units,
            "embedding_dim": self.embedding_dim, "attention": self.attention,
            "dropout": self.dropout_rate, "max_source_length": self.max_source_length,
            "max_target_length": self.max_target_length, "num_layers": self.num_layers,
        }


class _Parts:
    """The forward pass, shared by the functional graph and the step protocol."""

    def __init__(self, parts, arch, cell, units):
        self.p, self.arch, self.cell, self.units = parts, arch, cell, units

    def encode(self, source_ids, training, for_search=False):
        p = self.p
        mask = ops.not_equal(source_ids, 0)
        sequence = p["dropout"](p["source_embedding"](source_ids), training=training)
        for encoder in p["encoders"]:
            outputs = encoder(sequence, mask=mask, training=training)
            sequence, final = outputs[0], outputs[1:]  # final: fw (h[, c]) then bw (h[, c])
        per_direction = len(final) // 2
        last_h = ops.concatenate([final[0], final[per_direction]], axis=-1)  # [B, 2U]
        memory = {"mask": mask}
        if self.arch == "attention":
            memory["states"] = p["memory_projection"](sequence)  # [B, S, U]
        h0 = p["bridge"](last_h)
        initial = {}
        layers = 1 if self.arch == "attention" else len(p["decoders"])
        for layer in range(layers):  # every decoder layer starts from the bridge
            initial["h" + _suffix(layer)] = h0
            if self.cell == "lstm":
                initial["c" + _suffix(layer)] = ops.zeros_like(h0)
        if self.arch == "attention":
            if for_search:
                # Only outside the functional graph: a method call on a symbolic tensor
                # would freeze the attention weights as constants (see translator.py).
                memory["keys"] = p["decoders"][0].precompute_memory(memory["states"])
            initial["feed"] = ops.zeros_like(h0)
        else:
            memory["context"] = h0  # the fixed context vector
        memory["initial_state"] = initial
        return memory

    def decode(self, decoder_ids, memory, training):
        return self.project(self.decoder_states(decoder_ids, memory, training))

    def project(self, states):
        return ops.cast(self.p["output_projection"](states), "float32")

    def decoder_states(self, decoder_ids, memory, training):
        """`[B, T, U]` top decoder outputs, before the output projection."""
        p = self.p
        x = p["dropout"](p["target_embedding"](decoder_ids), training=training)
        if self.arch == "attention":
            h = p["decoders"][0](x, memory["states"], memory_mask=memory["mask"],
                                 initial_state=memory["initial_state"], training=training)
        else:
            # [B, U] -> [B, T, U]: broadcast against the time axis of x.
            context = memory["context"][:, None, :] * ops.ones_like(x[..., :1])
            h = ops.concatenate([x, context], -1)
            for layer, decoder in enumerate(p["decoders"]):
                h = decoder(h, initial_state=self._initial_list(memory["initial_state"], layer),
                            training=training)[0]
        return h

    def _initial_list(self, state, layer=0):
        """The recurrent state of decoder `layer` (`h`, `c`, or `h_1`...), as Keras wants it."""
        keys = ["h", "c"] if self.cell == "lstm" else ["h"]
        return [state[key + _suffix(layer)] for key in keys]

    def step(self, token_ids, state, memory):
        p = self.p
        x = p["target_embedding"](token_ids)  # [N, E]
        new_state = {}
        if self.arch == "attention":
            keys = {k: state[k] for k in state if k != "attention"}
            h, cell_state, weights = p["decoders"][0].step(x, keys, memory["states"],
                                                       memory["keys"], memory["mask"])
            new_state.update(cell_state)
            new_state["attention"] = ops.cast(weights, "float32")
        else:
            h = ops.concatenate([x, memory["context"]], -1)[:, None, :]  # [N, 1, E+U]
            for layer, decoder in enumerate(p["decoders"]):
                outputs = decoder(h, initial_state=self._initial_list(state, layer))
                h = outputs[0]
                new_state["h" + _suffix(layer)] = outputs[1]
                if self.cell == "lstm":
                    new_state["c" + _suffix(layer)] = outputs[2]
            h = h[:, 0]
            new_state["attention"] = state["attention"]
        return self.project(h), new_state
