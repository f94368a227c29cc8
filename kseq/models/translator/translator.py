"""`Translator`: an encoder, a decoder and a `TranslatorPreprocessor`, composed.

Shape letters: `B` batch, `S` source length, `T` target length, `E` width,
`V` target vocabulary, `N` rows in a search step.
"""

import copy

import keras
import tensorflow as tf  # string constants for the preprocessor

from kseq.errors import KseqError
from kseq.models.encoder_decoder_task import EncoderDecoderTask
from kseq.models.recipes import build_data, make_tokenizer, merge


@keras.saving.register_keras_serializable(package="kseq")
class Translator(EncoderDecoderTask):
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
    source_name = "source_ids"

    @classmethod
    def source_input(cls, preprocessor):
        return keras.Input(shape=(None,), dtype="int32", name=cls.source_name)

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
        super().__init__(encoder, decoder, preprocessor, **kwargs)
        # === Config (encoder, decoder, preprocessor: see EncoderDecoderTask) ===
        self.share_source_embedding = share_source_embedding
        self.legacy_layout = legacy_layout

    @property
    def source_tokenizer(self):
        return self.preprocessor.source_tokenizer

    @property
    def max_source_length(self):
        return self.preprocessor.max_source_length

    def source_ids_for(self, texts):
        """Search input `[B, W]` of a list of strings (the preprocessor's `inference_inputs`)."""
        return self.preprocessor.inference_inputs(tf.constant(texts, tf.string))["source_ids"]

    # === Text in, text out ===

    def translate(self, texts, beam_size=4, length_penalty="gnmt", alpha=0.6, n_best=1,
                  batch_size=64, xla=False, return_scores=False, return_truncated=False,
                  prefixes=None, **search_options):
        """Translates a list of strings; returns `list[str]`, or `list[list[str]]` for n_best > 1.

        See `generate`. `str` or UTF-8 `bytes` items are accepted; invalid
        UTF-8 (or a lone surrogate in a `str`) becomes U+FFFD, as in the
        exported model. `prefixes` (one target-side string per text) force
        the start of each translation; the search continues it, scoring only
        what it adds. One string (`str` or `bytes`, with one prefix string)
        is translated as a list of one, and its one item returned: a `str`
        (a list for n_best > 1, a tuple with `return_scores`): `translate("nine")`
        is `"neuf"` where `translate(["nine"])` is `["neuf"]`.
        """
        single = isinstance(texts, (str, bytes))
        if single:
            texts = [texts]
            prefixes = [prefixes] if isinstance(prefixes, (str, bytes)) else prefixes
        outputs = self.generate(texts, beam_size=beam_size, length_penalty=length_penalty,
                                alpha=alpha, n_best=n_best, batch_size=batch_size, xla=xla,
                                return_scores=return_scores, return_truncated=return_truncated,
                                prompts=prefixes, **search_options)
        return outputs[0] if single else outputs

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

    #: Reads a config saved before the parts existed (flat hyper-parameters, no
    #: `"encoder"`); `kseq.models.translator.legacy` sets it when the package loads.
    legacy_reader = None

    @classmethod
    def from_config(cls, config):
        if "encoder" not in config:  # saved by kseq 0.1: flat hyper-parameters
            if Translator.legacy_reader is None:
                raise KseqError("A config without parts needs kseq.models.translator.legacy. "
                                f"Received: keys {sorted(config)}")
            return Translator.legacy_reader(config)
        return super().from_config(config)

    # === Recipes and the command line (see kseq.models.task) ===

    cli_verbs = ("translate", "evaluate", "export")
    export_options = ("beam_size", "n_best", "xla", "length_penalty", "alpha", "max_length")
    architecture_key = "arch"

    # Each architecture name is a pair of parts (set with the builder, see register_builder).
    architecture_parts = {}

    @classmethod
    def register_builder(cls, builder, architectures):
        """As `Task.register_builder`; `architectures` maps each name to its
        `(encoder, decoder)` parts."""
        super().register_builder(builder, architectures)
        cls.architecture_parts = dict(architectures)

    @classmethod
    def describe(cls, recipe):
        """The recipe's architecture: `"transformer"`, `"attention"`, `"rnn"`, `"conv"` (a
        recipe's `arch`, or the pair of parts it names), else `"encoder+decoder"`."""
        model = recipe.get("model") or {}
        if "encoder" not in model and "decoder" not in model:
            return model.get("arch", "transformer")
        pair = (model.get("encoder", "transformer"), model.get("decoder", "transformer"))
        names = {parts: name for name, parts in cls.architecture_parts.items()}
        return names.get(pair, "+".join(pair))

    @classmethod
    def default_recipe(cls, architecture):
        """The recipe of a bare architecture name, its parts named.

        Example:
        >>> import kseq
        >>> kseq.models.Translator.default_recipe("attention")["model"]
        {'encoder': 'rnn', 'decoder': 'attention'}
        """
        recipe = super().default_recipe(architecture)
        encoder, decoder = cls.architecture_parts[architecture]
        recipe["model"] = {"encoder": encoder, "decoder": decoder}
        return recipe

    @classmethod
    def merged_recipe(cls, base, *overrides):
        """`merge(base, *overrides)`, where an architecture name and the parts replace each
        other: a layer naming `encoder`/`decoder` reads a lower `arch` as its pair of parts,
        and a layer naming `arch` drops lower parts.

        Example:
        >>> import kseq
        >>> base = kseq.models.Translator.default_recipe("attention")
        >>> kseq.models.Translator.merged_recipe(base, {"model": {"decoder": "rnn"}})["model"]
        {'encoder': 'rnn', 'decoder': 'rnn'}
        """
        result = copy.deepcopy(base)
        for override in overrides:
            names = set((override or {}).get("model") or {})
            model = result.setdefault("model", {})
            if names & {"encoder", "decoder"} and model.get("arch") in cls.architecture_parts \
                    and "arch" not in names:
                encoder, decoder = cls.architecture_parts[model.pop("arch")]
                model.setdefault("encoder", encoder)
                model.setdefault("decoder", decoder)
            elif "arch" in names:
                model.pop("encoder", None)
                model.pop("decoder", None)
            result = merge(result, override)
        return result

    @classmethod
    def from_recipe(cls, recipe, train_data=None, vocab=None):
        """The compiled translator `recipe` describes (`build_translator` of its `model`).

        Args:
            recipe: a recipe dict (`model`, `tokenizer`, `training`, optional `data`).
            train_data: `(source, target)` pairs the vocabularies are built from;
                default: the train split of the recipe's data builder, when a
                vocabulary is missing.
            vocab: one vocabulary for both sides, or a `(source, target)` tuple
                (each a tokenizer, a token list, a vocabulary file, or None to
                build it). The recipe's `tokenizer.shared` or
                `model.share_embeddings: "all"` builds one joint vocabulary.

        Example:
        >>> import kseq
        >>> recipe = {"model": {"arch": "rnn", "units": 8, "embedding_dim": 8}}
        >>> model = kseq.models.Translator.from_recipe(recipe, [("one", "un")])
        >>> model.source_tokenizer.vocabulary[-1], model.recipe == recipe
        ('one', True)
        """
        source_vocab, target_vocab = (vocab if isinstance(vocab, tuple) and len(vocab) == 2
                                      else (vocab, vocab))
        if train_data is None and None in (source_vocab, target_vocab) and "data" in recipe:
            train_data = build_data(recipe)["train"]
        options = dict(recipe.get("model") or {})
        arch = options.pop("arch", None)  # or the parts: `encoder` / `decoder`
        spec = recipe.get("tokenizer")
        sources = [source for source, _ in train_data] if train_data else None
        targets = [target for _, target in train_data] if train_data else None
        # One vocabulary for both sides: asked for by the tokenizer spec, or by shared embeddings.
        shared = (spec or {}).get("shared") or options.get("share_embeddings") == "all"
        if shared and source_vocab is None:
            source_tokenizer = target_tokenizer = make_tokenizer(
                None, spec, sources + targets if train_data else None)
        elif vocab is not None and not isinstance(vocab, tuple):
            source_tokenizer = target_tokenizer = make_tokenizer(vocab, spec)
        else:
            source_tokenizer = make_tokenizer(source_vocab, spec, sources)
            target_tokenizer = make_tokenizer(target_vocab, spec, targets)
        model = cls.builder(arch, source_tokenizer, target_tokenizer, **options)
        model.recipe = recipe
        return model.compile_from_recipe(recipe.get("training", {}))
