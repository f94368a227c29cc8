"""`LanguageModel`: a decoder without memory and a `LanguageModelPreprocessor`, composed.

N vs N (the next token from the previous ones) and, with categories, 1 vs N
(a text from its category: the category is the sequence's first token, a
learned prefix). Generation runs the shared searches of `GenerativeTask`
(greedy, sampling, beam with length penalties, n-best, no-repeat-n-gram) over
the decoder's step protocol; a prompt is the start of the output, its shared
part pre-filled into the KV cache in one pass (`kseq.decoding.prompts`).

Shape letters: `B` batch, `T` sequence length, `E` width, `V` the tokenizer's
vocabulary, `C` categories, `N` rows in a search step, `M` outputs per row.
"""

import logging
import random

import keras
from keras import ops
import tensorflow as tf  # the generate graph: ragged prompts, per-row shifts

from kseq.arguments import check_int, check_texts
from kseq.errors import KseqError
from kseq.models.generative_task import GenerativeTask
from kseq.models.language_model.generation_graph import Generate, search_function
from kseq.models.language_model.language_model_preprocessor import (UNKNOWN_CATEGORY,
                                                                    category_text_pairs,
                                                                    iter_text_rows,
                                                                    read_text_rows)
from kseq.models.language_model.perplexity import PerplexityResult, corpus_nats
from kseq.models.part import check_room
from kseq.models.recipes import build_data, make_tokenizer

logger = logging.getLogger("kseq")


@keras.saving.register_keras_serializable(package="kseq")
class LanguageModel(GenerativeTask):
    """`{"decoder_ids" [B, T]} -> logits [B, T, V]`: the next token at every position.

    A decoder of `kseq.models.decoders` without memory: a
    `TransformerDecoder(cross_attention=False)` (causal self-attention with a
    KV cache) or an `RnnDecoder(reads_memory=False)`. Its vocabulary is the
    tokenizer's `V` tokens and one token per category (the first input of a
    categorised text); the logits cover the `V` tokens only, so a category is
    never predicted. Training graph, `step` and `prefill` run the same
    sublayers. The preprocessor (vocabulary and category names) is part of the
    config: a `.keras` file is self-contained.

    Args:
        decoder: a decoder without memory, of vocabulary `V + C`.
        preprocessor: a `LanguageModelPreprocessor`.

    Example:
    >>> import kseq
    >>> model = kseq.zoo.language_model("gru", train_data=["one two three", "two three"],
    ...                                 hidden_dim=8)
    >>> len(model.generate(["one"], max_length=6))
    1
    >>> model.perplexity(["one two"]).tokens
    3
    """

    preset_task = "language_model"
    architecture_key = "arch"
    tokenizer_kind = "word"
    validation_score = "perplexity"
    lower_score_is_better = True  # (fine-tuning's best epoch)
    examples_without_targets = True  # `fit(texts)`: a text is a whole example
    cli_verbs = ("generate", "evaluate", "export")
    evaluate_options = ("batch_size",)
    export_options = ("beam_size", "n_best", "length_penalty", "alpha", "max_length",
                      "sample", "temperature", "top_k", "top_p", "no_repeat_ngram_size", "xla")

    def __init__(self, decoder, preprocessor, **kwargs):
        check_room(decoder, "decoder", preprocessor, "max_length")
        expected = preprocessor.text_vocabulary_size + len(preprocessor.categories)
        if decoder.vocabulary_size != expected:
            raise ValueError(f"The decoder's vocabulary must hold the tokenizer's tokens and "
                             f"one token per category ({expected}). Received: "
                             f"vocabulary_size={decoder.vocabulary_size}")
        # === Functional graph (through the parts' sublayers: see kseq.models.task) ===
        decoder_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_ids")
        logits = self._token_logits(decoder.project(decoder.hidden_states(decoder_ids, None)),
                                    preprocessor)
        super().__init__(inputs={"decoder_ids": decoder_ids}, outputs=logits, **kwargs)
        # === Config ===
        self.decoder = decoder
        self.preprocessor = preprocessor

    @staticmethod
    def _token_logits(logits, preprocessor):
        """Logits `[..., V + C]` -> `[..., V]`: the category tokens are inputs only."""
        if not preprocessor.categories:
            return logits
        return logits[..., : preprocessor.text_vocabulary_size]

    @property
    def tokenizer(self):
        return self.preprocessor.tokenizer

    @property
    def categories(self):
        """The category names the model conditions on (empty: a plain language model)."""
        return list(self.preprocessor.categories)

    @property
    def max_length(self):
        return self.preprocessor.max_length

    @property
    def max_target_length(self):  # what `GenerativeTask.search_settings` bounds
        return self.preprocessor.max_length

    # === Step protocol ===

    def encode(self, start_ids):
        """`start_ids [B]` -> the decoder's prepared memory: none, `{"mask": [B, 0]}`."""
        batch = ops.shape(start_ids)[0]
        return self.decoder.prepare({"mask": ops.zeros((batch, 0), "bool")})

    def search_start_ids(self, inputs, memory):
        """Each row's first token: its category's, or `<s>`."""
        return ops.cast(inputs, "int32")

    def initial_state(self, memory):
        return self.decoder.initial_state(memory)

    def step(self, token_ids, state, memory, t):
        """One position: `[N]` ids at position `t` -> `(logits [N, V] float32, state)`."""
        logits, state = self.decoder.step(token_ids, state, memory, t)
        return self._token_logits(logits, self.preprocessor), state

    @property
    def prefill(self):
        """The decoder's `prefill(input_ids [B, P], state, memory) -> state` (the
        Transformer's: the prompt's shared positions in one pass), or None."""
        return getattr(self.decoder, "prefill", None)

    # === Training hooks (see kseq.models.task) ===

    def hidden_states(self, inputs, training=None):
        return self.decoder.hidden_states(inputs["decoder_ids"], None, training=training)

    def project(self, states):
        return self._token_logits(self.decoder.project(states), self.preprocessor)

    def compile_from_recipe(self, training):
        """As `Task.compile_from_recipe`, with no label smoothing unless the recipe asks
        (smoothing pays in perplexity, what a language model is scored by)."""
        return super().compile_from_recipe({"label_smoothing": 0.0, **training})

    # === Text out ===

    def _categories_for(self, category, count):
        """`category` (None, a str, or one per prompt) as a checked list of `count` strings."""
        if category is None or isinstance(category, str):
            categories = [category or ""] * count
        elif isinstance(category, (list, tuple)) and all(
                isinstance(c, str) or c is None for c in category):
            categories = [c or "" for c in category]
            if len(categories) != count:
                raise KseqError(f"`category` needs one name per prompt. Received: "
                                f"{len(categories)} categories for {count} prompts")
        else:
            raise KseqError(f"`category` must be a string, None, or a list of one per prompt. "
                            f"Received: category={category!r:.200}")
        self.preprocessor.check_categories(categories)
        return categories

    def compiled_texts(self, settings, xla=False):
        """`generate`'s one graph call per batch, cached per settings (see `Generate`; the
        settings' seed is not used: the seed is an input)."""
        cache = self.__dict__.setdefault("_compiled_texts", {})
        key = (settings, xla)
        if key not in cache:
            strings = tf.TensorSpec([None], tf.string)
            cache[key] = tf.function(Generate(self, search_function(self, settings, xla)),
                                     input_signature=[strings, strings,
                                                      tf.TensorSpec([], tf.int32)],
                                     autograph=False)
        return cache[key]

    def generate(self, prompts, category=None, *, max_length=None, beam_size=1, sample=False,
                 temperature=1.0, top_k=None, top_p=None, seed=None, n_best=1,
                 length_penalty="gnmt", alpha=0.6, no_repeat_ngram_size=0, min_length=0,
                 batch_size=64, return_scores=False, xla=False):
        """Continues each prompt; returns the continuation text per prompt (`list[str]`, or
        `list[list[str]]` for `n_best > 1`; with `return_scores`, `(text, scores)` items).

        Args:
            prompts: a list of strings ("" starts a text from nothing).
            category: None, a category name for every prompt, or one per prompt.
            max_length: most tokens of prompt and continuation together (with the end
                token); default and at most the model's `max_length`.
            beam_size: 1 is greedy search (without `sample`); more is beam search
                with `length_penalty` ("gnmt", "fairseq" or None) and `alpha`.
            sample: draw each token (`temperature`, `top_k`, `top_p`); the same
                `seed` gives the same texts.
            n_best: outputs per prompt (beam search, `beam_size >= n_best`).
            no_repeat_ngram_size: forbid repeating an n-gram of this size.
            min_length: the end token is blocked before this many generated tokens.
            batch_size: prompts per search, sorted by length.
            xla: compile the search with XLA.
        """
        if isinstance(prompts, str):
            raise KseqError(f"`prompts` must be a list of strings (a single one in a list). "
                            f"Received: prompts={prompts!r:.200}")
        prompts = check_texts("prompts", prompts)
        categories = self._categories_for(category, len(prompts))
        batch_size = check_int("batch_size", batch_size)
        if not prompts:
            return []
        settings = self.search_settings(
            beam_size, length_penalty, alpha, n_best, max_length=max_length,
            min_length=min_length, no_repeat_ngram_size=no_repeat_ngram_size,
            sampling=sample, temperature=temperature, top_k=0 if top_k is None else top_k,
            top_p=1.0 if top_p is None else top_p, seed=seed)
        # The seed is an input of one compiled search (None: a fresh one per call).
        seed = dict(settings)["seed"]
        seed = tf.constant(random.randrange(2**31) if seed is None else seed, tf.int32)
        run = self.compiled_texts(tuple((k, None if k == "seed" else v) for k, v in settings),
                                  xla)
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        results, truncated = [None] * len(prompts), 0
        for begin in range(0, len(order), batch_size):
            chunk = order[begin : begin + batch_size]
            strings, scores, _, cut, _ = (x.numpy() for x in run(
                tf.constant([prompts[i] for i in chunk], tf.string),
                tf.constant([categories[i] for i in chunk], tf.string), seed))
            truncated += int(cut.sum())
            for row, index in enumerate(chunk):
                texts = [s.decode("utf-8") for s in strings[row]]
                out = texts if n_best > 1 else texts[0]
                results[index] = (out, scores[row].tolist()) if return_scores else out
        if truncated:
            logger.warning("%d prompt(s) longer than the model's max_length - 1 tokens were "
                           "cut.", truncated)
        return results

    # === Scores ===

    def perplexity(self, data, batch_size=64):
        """Per-token cross-entropy and perplexity of `data` (texts, or `(category, text)`
        pairs: a wrong category measures what the category is worth) over its real
        tokens, each text's end token included. Returns a `PerplexityResult`."""
        pairs = category_text_pairs(data)
        if not pairs:
            raise KseqError("perplexity needs at least one text. Received: 0 texts")
        self.preprocessor.check_categories([c for c, _ in pairs])
        nats, tokens = corpus_nats(self, pairs, check_int("batch_size", batch_size))
        return PerplexityResult(nats, tokens, len(pairs))

    def evaluate(self, x=None, y=None, *args, **kwargs):
        """`evaluate(texts or (category, text) pairs)` is `perplexity`; anything else (a
        `tf.data.Dataset` of model inputs, arrays) is Keras's `evaluate`."""
        if y is None and not args and isinstance(x, (list, tuple)) and x and all(
                isinstance(item, str) or (isinstance(item, (list, tuple)) and len(item) == 2)
                for item in x):
            return self.perplexity(x, **kwargs)
        return super().evaluate(x, y, *args, **kwargs)

    @classmethod
    def table_rows(cls, path, columns=None, skipped=None):
        """A training file's rows for `kseq train --data`: one text a line, or
        `category<TAB>text` (`(line, category, text)`; `--columns` does not apply)."""
        if columns is not None:
            raise KseqError(f"A language model's data file is one text a line (or "
                            f"category<TAB>text): --columns does not apply. Received: "
                            f"--columns {','.join(columns)}")
        return iter_text_rows(path, skipped)

    @classmethod
    def held_out_key(cls, source, target):
        """A text's split is hashed from the text (not its category: every category has
        held-out texts)."""
        return target

    @staticmethod
    def read_data_file(path, limit=None):
        """`kseq evaluate --data FILE`'s texts: one a line, or `category<TAB>text`."""
        return read_text_rows(path, limit)

    def evaluate_pairs(self, pairs, batch_size=64):
        return self.perplexity(pairs, batch_size=batch_size)

    def validation_callback(self, examples, training, verbose=True):
        """Perplexity of at most `training["validation_subset"]` (2000) validation texts,
        each epoch, logged as `val_perplexity`."""
        from kseq.metrics import ValidationScoreCallback

        subset = training.get("validation_subset", 2000)
        if not subset:
            return None
        return ValidationScoreCallback(examples, "perplexity", subset=subset, verbose=verbose)

    # === Export ===

    def serving_spec(self, beam_size=1, n_best=1, length_penalty="gnmt", alpha=0.6,
                     max_length=None, sample=False, temperature=1.0, top_k=None, top_p=None,
                     no_repeat_ngram_size=0, xla=False):
        """What `export` writes: prompts (and categories, and a seed when sampling) in,
        continuations and scores out; see `kseq.models.language_model.serving`."""
        from kseq.models.language_model.serving import language_model_serving_spec

        return language_model_serving_spec(
            self, beam_size=beam_size, n_best=n_best, length_penalty=length_penalty,
            alpha=alpha, max_length=max_length, sample=sample, temperature=temperature,
            top_k=top_k, top_p=top_p, no_repeat_ngram_size=no_repeat_ngram_size, xla=xla)

    def export_ctranslate2(self, directory, quantization=None, overwrite=False):
        """Writes a Transformer language model as a CTranslate2 decoder-only model folder
        (`kseq.models.language_model.ctranslate2_export`; `kseq generate FOLDER` and
        `kseq.ctranslate2.CTranslate2LanguageModel` run it without TensorFlow)."""
        from kseq.models.language_model.ctranslate2_export import export_ctranslate2

        return export_ctranslate2(self, directory, quantization=quantization,
                                  overwrite=overwrite)

    # === Recipes (see kseq.models.task) ===

    @classmethod
    def describe(cls, recipe):
        model = recipe.get("model") or {}
        return str(model.get("arch", "transformer"))

    @classmethod
    def from_recipe(cls, recipe, train_data=None, vocab=None, categories=None):
        """The compiled language model `recipe` describes (`build_language_model`).

        Args:
            recipe: a recipe dict (`model` with `arch`, `tokenizer`, `training`,
                optional `data`: a builder of `(category, text)` pairs).
            train_data: texts or `(category, text)` pairs the vocabulary and the
                categories are read from; default: the recipe's data's train split
                when either is missing.
            vocab: a tokenizer, a token list or a vocabulary file.
            categories: the category names (default: those of `train_data`).
        """
        if train_data is None and (vocab is None or categories is None) and "data" in recipe:
            train_data = build_data(recipe)["train"]
        pairs = category_text_pairs(train_data, "train_data") if train_data is not None \
            else None
        tokenizer = make_tokenizer(vocab, recipe.get("tokenizer"),
                                   [t for _, t in pairs] if pairs is not None else None)
        if categories is None:
            categories = sorted({c for c, _ in pairs if c}) if pairs else []
        options = dict(recipe.get("model") or {})
        arch = options.pop("arch", "transformer")
        model = cls.builder(arch, tokenizer, categories, **options)
        model.recipe = recipe
        training = recipe.get("training", {})
        model.preprocessor.default_boundaries = training.get("boundaries")
        model.preprocessor.default_batch_size = training.get("batch_size")
        return model.compile_from_recipe(training)


__all__ = ["LanguageModel", "UNKNOWN_CATEGORY"]
