"""`EncoderDecoderTask`: an encoder, a decoder and a preprocessor composed into a generative task.

What `Translator` (text in) and `Captioner` (an image in) share, written once:
the room check (each part's `max_length` holds the preprocessor's length on
its side), the functional graph (`encoder.call` then
`decoder.project(decoder.hidden_states(...))`, so its nodes are the parts'
sublayers: see `kseq.models.task`), the step protocol (`encode`,
`initial_state`, `step`) and the training hooks (`hidden_states`, `project`).
A subclass names its encoder's model input (`source_name`) and builds it
(`source_input`); everything else of the search comes from `GenerativeTask`.

Shape letters: `B` batch, `T` target length, `E` width, `V` target
vocabulary, `N` rows in a search step.
"""

import keras

from kseq.models.generative_task import GenerativeTask
from kseq.models.part import check_room


class EncoderDecoderTask(GenerativeTask):
    """Base of `{source_name: ..., "decoder_ids" [B, T]} -> logits [B, T, V]` tasks.

    Args:
        encoder: a part of `kseq.models.encoders` reading the `source_name` input.
        decoder: a part of `kseq.models.decoders` whose memory the encoder provides.
        preprocessor: a preprocessor with `target_tokenizer` and
            `max_target_length` (and `max_source_length` for a text source).
        **kwargs: `keras.Model`'s (`name`, `dtype`).

    See `kseq.models.Translator` and `kseq.models.Captioner` for examples.
    """

    # The model input the encoder reads (a subclass sets it, and `source_input`).
    source_name = None

    @classmethod
    def source_input(cls, preprocessor):
        """The `keras.Input` named `source_name` (its shape and dtype from `preprocessor`)."""
        raise NotImplementedError(f"{cls.__name__} must define source_input(preprocessor)")

    def __init__(self, encoder, decoder, preprocessor, **kwargs):
        # Each part's `max_length` (where it has one) holds the preprocessor's length on its side.
        check_room(encoder, "encoder", preprocessor, "max_source_length")
        check_room(decoder, "decoder", preprocessor, "max_target_length")
        # === Functional graph (through the parts' sublayers: see kseq.models.task) ===
        source = type(self).source_input(preprocessor)
        decoder_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_ids")
        memory = encoder.call(source)
        logits = decoder.project(decoder.hidden_states(decoder_ids, memory))
        super().__init__(inputs={self.source_name: source, "decoder_ids": decoder_ids},
                         outputs=logits, **kwargs)
        # === Config ===
        self.encoder = encoder
        self.decoder = decoder
        self.preprocessor = preprocessor

    @property
    def target_tokenizer(self):
        return self.preprocessor.target_tokenizer

    @property
    def max_target_length(self):
        return self.preprocessor.max_target_length

    # === Step protocol ===

    def encode(self, inputs):
        """The encoder's input (`[B, S]` ids, `[B, H, W, 3]` pixels) -> the decoder's prepared
        memory (batch first, includes `"mask"` `[B, S]`)."""
        return self.decoder.prepare(self.encoder.call(inputs, training=False))

    def initial_state(self, memory):
        """The decoder's search state before the first step (fixed shapes, batch first)."""
        return self.decoder.initial_state(memory)

    def step(self, token_ids, state, memory, t):
        """One decoding step: `[N]` ids at position `t` -> `(logits [N, V] float32, state)`."""
        return self.decoder.step(token_ids, state, memory, t)

    # === Training hooks (see kseq.models.task) ===

    def encoder_memory(self, inputs, training=None):
        """The encoder's memory of a batch of model inputs (a dict)."""
        return self.encoder.call(inputs[self.source_name], training=training)

    def hidden_states(self, inputs, training=None):
        """Decoder states `[B, T, E]` before the output projection."""
        memory = self.encoder_memory(inputs, training)
        return self.decoder.hidden_states(inputs["decoder_ids"], memory, training=training)

    def project(self, states):
        """Float32 logits `[..., V]` of decoder states `[..., E]`."""
        return self.decoder.project(states)
