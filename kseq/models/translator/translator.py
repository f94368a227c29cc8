"""`Translator`: an encoder, a decoder and a `TranslatorPreprocessor`, composed.

Shape letters: `B` batch, `S` source length, `T` target length, `E` width,
`V` target vocabulary, `N` rows in a search step.
"""

import keras
import tensorflow as tf  # string constants for the preprocessor

from kseq.models.generative_task import GenerativeTask


@keras.saving.register_keras_serializable(package="kseq")
class Translator(GenerativeTask):
    """Text to text: `{"source_ids" [B, S], "decoder_ids" [B, T]} -> logits [B, T, V]`.

    Any encoder of `kseq.models.encoders` with any decoder of
    `kseq.models.decoders` whose memory it provides (the RNN decoder needs
    `"final"`). The training graph and `step()` run the same sublayers, so a
    search step reproduces the teacher-forced logits. The preprocessor (with
    its vocabularies) is part of the config: a `.keras` file is self-contained.
    `kseq.zoo.translator` builds the four architectures from hyper-parameters;
    files saved before the parts existed (`kseq>Translator` / `RnnTranslator`
    / `ConvTranslator` with flat hyper-parameters) load as these parts.

    Args:
        encoder: a text encoder (`TransformerEncoder`, `RnnEncoder`, `ConvEncoder`).
        decoder: a decoder (`TransformerDecoder`, `RnnDecoder`, `ConvDecoder`).
        preprocessor: a `TranslatorPreprocessor`.
        share_source_embedding: the decoder reads with the encoder's token
            embedding (one vocabulary for both sides; a Transformer decoder also
            projects with it).
        legacy_layout: the decoder reads through the encoder's weightless
            embedding layers, as in models saved by kseq 0.1 (set when one is
            loaded; see `Decoder.reuse_encoder_layers`).

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three", "un deux trois"])
    >>> encoder = kseq.models.encoders.TransformerEncoder(
    ...     tok.vocabulary_size, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
    ...     max_length=8)
    >>> decoder = kseq.models.decoders.TransformerDecoder(
    ...     tok.vocabulary_size, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
    ...     max_length=8)
    >>> model = kseq.models.Translator(encoder, decoder,
    ...                                kseq.models.TranslatorPreprocessor(tok, tok, 8, 8))
    >>> len(model.translate(["one two"], beam_size=2))
    1
    """

    preset_task = "translator"

    def __init__(self, encoder, decoder, preprocessor, share_source_embedding=False,
                 legacy_layout=False, **kwargs):
        if legacy_layout:
            decoder.reuse_encoder_layers(encoder)
        if share_source_embedding:
            if not hasattr(decoder, "share_token_embedding") or not hasattr(
                    encoder, "token_embedding"):
                raise ValueError("share_source_embedding needs a Transformer or recurrent "
                                 "encoder and decoder. Received: "
                                 f"{type(encoder).__name__}, {type(decoder).__name__}")
            decoder.share_token_embedding(encoder.token_embedding)  # checks the widths
        encoder_room = getattr(encoder, "max_length", None)
        if encoder_room is not None and preprocessor.max_source_length > encoder_room:
            raise ValueError("The encoder's max_length must hold the preprocessor's "
                             f"max_source_length. Received: max_length={encoder_room}, "
                             f"max_source_length={preprocessor.max_source_length}")
        decoder_room = getattr(decoder, "max_length", None)
        if decoder_room is not None and preprocessor.max_target_length > decoder_room:
            raise ValueError("The decoder's max_length must hold the preprocessor's "
                             f"max_target_length. Received: max_length={decoder_room}, "
                             f"max_target_length={preprocessor.max_target_length}")
        # === Functional graph (through the parts' sublayers: see kseq.models.task) ===
        source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
        decoder_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_ids")
        memory = encoder.call(source_ids)
        logits = decoder.project(decoder.hidden_states(decoder_ids, memory))
        super().__init__(inputs={"source_ids": source_ids, "decoder_ids": decoder_ids},
                         outputs=logits, **kwargs)
        # === Config ===
        self.encoder = encoder
        self.decoder = decoder
        self.preprocessor = preprocessor
        self.share_source_embedding = share_source_embedding
        self.legacy_layout = legacy_layout

    @property
    def source_tokenizer(self):
        return self.preprocessor.source_tokenizer

    @property
    def target_tokenizer(self):
        return self.preprocessor.target_tokenizer

    @property
    def max_source_length(self):
        return self.preprocessor.max_source_length

    @property
    def max_target_length(self):
        return self.preprocessor.max_target_length

    def source_ids_for(self, texts):
        """Search input `[B, W]` of a list of strings (the preprocessor's `inference_inputs`)."""
        return self.preprocessor.inference_inputs(tf.constant(texts, tf.string))["source_ids"]

    # === Step protocol ===

    def encode(self, source_ids):
        """`[B, S]` ids -> the decoder's prepared memory (batch first, includes `"mask"`)."""
        return self.decoder.prepare(self.encoder.call(source_ids, training=False))

    def initial_state(self, memory):
        return self.decoder.initial_state(memory)

    def step(self, token_ids, state, memory, t):
        """One decoding step: `[N]` ids at position `t` -> `(logits [N, V] float32, state)`."""
        return self.decoder.step(token_ids, state, memory, t)

    # === Training hooks (see kseq.models.task) ===

    def hidden_states(self, inputs, training=None):
        """Decoder states `[B, T, E]` before the output projection."""
        memory = self.encoder.call(inputs["source_ids"], training=training)
        return self.decoder.hidden_states(inputs["decoder_ids"], memory, training=training)

    def project(self, states):
        """Float32 logits `[..., V]` of decoder states `[..., E]`."""
        return self.decoder.project(states)

    # === Text in, text out ===

    def translate(self, texts, beam_size=4, length_penalty="gnmt", alpha=0.6, n_best=1,
                  batch_size=64, xla=False, return_scores=False, return_truncated=False,
                  prefixes=None, **search_options):
        """Translates a list of strings; returns `list[str]`, or `list[list[str]]` for n_best > 1.

        See `generate`. `str` or UTF-8 `bytes` items are accepted; invalid
        UTF-8 (or a lone surrogate in a `str`) becomes U+FFFD, as in the
        exported model. `prefixes` (one target-side string per text) force
        the start of each translation; the search continues it, scoring only
        what it adds.
        """
        return self.generate(texts, beam_size=beam_size, length_penalty=length_penalty,
                             alpha=alpha, n_best=n_best, batch_size=batch_size, xla=xla,
                             return_scores=return_scores, return_truncated=return_truncated,
                             prompts=prefixes, **search_options)

    def serving_spec(self, beam_size=4, n_best=1, length_penalty="gnmt", alpha=0.6,
                     max_length=None, xla=False):
        """What `export` writes: strings in, translations out (`serving_default`), and
        `serve_ids`; see `kseq.models.translator.serving`. `model.export(path,
        beam_size=4, n_best=2)` passes these options."""
        from kseq.models.translator.serving import translator_serving_spec

        return translator_serving_spec(self, beam_size=beam_size, n_best=n_best,
                                       length_penalty=length_penalty, alpha=alpha,
                                       max_length=max_length, xla=xla)

    def plot_attention(self, text, path):
        """Writes the source-target alignment of `text` as a PNG heatmap (matplotlib).

        Returns the `[T, S]` weights. See `kseq.models.translator.attention_plot`.
        """
        from kseq.models.translator.attention_plot import plot_attention

        return plot_attention(self, text, path)

    # === Config ===

    @classmethod
    def from_config(cls, config):
        if "encoder" not in config:  # saved before the parts existed: flat hyper-parameters
            from kseq.models.translator.architectures import translator_from_legacy_config

            return translator_from_legacy_config(config)
        return super().from_config(config)
