"""`SequenceTagger`: a character-level encoder and a per-position softmax head: N -> N.

Shape letters: `B` batch, `T` characters, `W` words, `E` encoder width, `C` tags.
"""

import logging

import keras
import numpy as np
import tensorflow as tf  # ragged gathers of the tags at word starts
from keras import ops

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError
from kseq.models.evaluation_result import EvaluationResult
from kseq.models.label_spellings import warn_case_variants
from kseq.models.part import check_room
from kseq.models.recipes import build_data, make_tokenizer
from kseq.models.tagger.tagger_preprocessor import join_words
from kseq.models.task import Task


@keras.saving.register_keras_serializable(package="kseq")
class SequenceTagger(Task):
    """Words to tags, one per word: `{"char_ids" [B, T]} -> logits [B, T, C]`.

    A text encoder (`RnnEncoder` bidirectional, or `TransformerEncoder`) reads
    the sentence's characters; each word's tag is the head's output at its
    first character (`TaggerPreprocessor`), so an unseen word is tagged from
    its spelling and context. No CRF. Labels elsewhere are -1: loss and
    metrics count real words only. `kseq.zoo.tagger` builds one.

    Args:
        encoder: a text encoder over the character vocabulary.
        preprocessor: a `TaggerPreprocessor`.
        dropout: on the encoder states, in training.

    Example:
    >>> import kseq
    >>> tok = kseq.text.CharTokenizer.build_vocabulary(["the dog runs"])
    >>> encoder = kseq.models.encoders.RnnEncoder(tok.vocabulary_size, embedding_dim=8, units=8)
    >>> model = kseq.models.SequenceTagger(
    ...     encoder, kseq.models.TaggerPreprocessor(tok, ["DET", "NOUN", "VERB"], 32))
    >>> words, tags = model.tag(["the dog runs"])[0]
    >>> words, len(tags)
    (['the', 'dog', 'runs'], 3)
    """

    preset_task = "tagger"

    label_pad_id = -1  # tag 0 is a real tag

    def __init__(self, encoder, preprocessor, dropout=0.1, **kwargs):
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        check_room(encoder, "encoder", preprocessor, "max_length")
        dropout_layer = keras.layers.Dropout(dropout, name="head_dropout")
        head = keras.layers.Dense(preprocessor.num_tags, dtype=kwargs.get("dtype"), name="head")
        # === Functional graph (through the parts' sublayers: see kseq.models.task) ===
        char_ids = keras.Input(shape=(None,), dtype="int32", name="char_ids")
        states = encoder.call(char_ids)["states"]
        logits = ops.cast(head(dropout_layer(states)), "float32")
        super().__init__(inputs={"char_ids": char_ids}, outputs=logits, **kwargs)
        # === Config ===
        self.encoder = encoder
        self.preprocessor = preprocessor
        self.dropout = dropout
        self.dropout_layer, self.head = dropout_layer, head

    @property
    def tag_names(self):
        return self.preprocessor.tag_names

    # === Training hooks (see kseq.models.task) ===

    def hidden_states(self, inputs, training=None):
        states = self.encoder.call(inputs["char_ids"], training=training)["states"]
        return self.dropout_layer(states, training=training)  # [B, T, E]

    def project(self, states):
        return ops.cast(self.head(states), "float32")

    # === Words in, tags out ===

    def word_logits(self, sentences):
        """`[B]` sentences (words separated by spaces) -> ragged logits `[B, (W), C]` at the
        first character of each word that starts within `max_length` characters, and
        `truncated [B]`."""
        inputs = self.preprocessor.inference_inputs(sentences)
        logits = self.inference_logits({"char_ids": inputs["char_ids"]})  # [B, T, C]
        return tf.ragged.boolean_mask(logits, inputs["starts"]), inputs["truncated"]

    def tag_ids(self, sentences):
        """`[B]` sentences (words separated by spaces) -> ragged tag ids `[B, (W)]`, one per
        word that starts within `max_length` characters, and `truncated [B]`."""
        logits, truncated = self.word_logits(sentences)  # [B, (W), C]
        best = tf.argmax(logits.flat_values, axis=-1, output_type=tf.int32)  # [words]
        return logits.with_flat_values(best), truncated

    def _chunks(self, sentences, batch_size):
        """Sentences (as `tag` reads them) -> `(words, joined [b] sentences)` per batch."""
        batch_size = check_int("batch_size", batch_size)
        words = [s.split() if isinstance(s, str) else [str(w) for w in s] for s in
                 self._check_sentences(sentences)]
        for begin in range(0, len(words), batch_size):
            chunk = words[begin:begin + batch_size]
            yield chunk, join_words(tf.ragged.constant(chunk, dtype=tf.string) if any(chunk)
                                    else tf.ragged.constant([[]] * len(chunk), dtype=tf.string))

    def tag(self, sentences, batch_size=256, return_truncated=False):
        """Tags sentences: each item a `str` (split on whitespace) or a list of words.

        Returns `(words, tags)` per sentence, lists of equal length; an empty
        sentence gives `([], [])`. Words past `max_length` characters get no
        tag (their list is cut, with one warning for the whole call). With
        `return_truncated`, each item gains a last element `truncated` (bool)
        and there is no warning: the caller reports the cuts (`kseq tag` does
        once for a whole stream). One sentence as a `str` is tagged as a list
        of one, and its one item returned (a list of words stays a list of
        sentences).
        """
        if isinstance(sentences, str):
            return self.tag([sentences], batch_size, return_truncated)[0]
        results, cut = [], 0
        for chunk, joined in self._chunks(sentences, batch_size):
            ids, truncated = self.tag_ids(joined)
            for row, tag_ids, flag in zip(chunk, ids.to_list(), truncated.numpy().tolist()):
                tags = [self.tag_names[i] for i in tag_ids]
                results.append((row[: len(tags)], tags, bool(flag)) if return_truncated
                               else (row[: len(tags)], tags))
                cut += bool(flag)
        if cut and not return_truncated:
            self.warn_truncated(cut)
        return results

    def warn_truncated(self, count):
        """The warning for `count` sentences cut at `max_length` characters."""
        logging.getLogger("kseq").warning(
            "%d sentence(s) longer than max_length=%d characters were cut.",
            count, self.preprocessor.max_length)

    def predict_raw(self, sentences, batch_size=256):
        """`predict` on raw sentences (as `tag` reads them; bytes are decoded, invalid
        UTF-8 replaced): tag probabilities `[N, W, C]` float32, one row per tagged word
        (row `n`'s first `len(tag(...)[n][1])` rows), padded with rows of 0 to the most
        tagged words `W` of the batch. `tag` reports each row's argmax. See
        `kseq.models.Task.predict`.

        Example:
        >>> import kseq
        >>> tok = kseq.text.CharTokenizer.build_vocabulary(["the dog runs"])
        >>> encoder = kseq.models.encoders.RnnEncoder(tok.vocabulary_size, embedding_dim=8,
        ...                                           units=8)
        >>> model = kseq.models.SequenceTagger(
        ...     encoder, kseq.models.TaggerPreprocessor(tok, ["DET", "NOUN", "VERB"], 32))
        >>> probabilities = model.predict(["the dog runs", "dog"])
        >>> probabilities.shape, probabilities.sum(axis=-1).round(4).tolist()
        ((2, 3, 3), [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
        """
        if isinstance(sentences, (list, tuple)):
            sentences = [s.decode("utf-8", "replace") if isinstance(s, bytes) else s
                         for s in sentences]
        rows = []
        for _, joined in self._chunks(sentences, batch_size):
            logits, _ = self.word_logits(joined)  # ragged [b, (W), C]
            flat = ops.convert_to_numpy(ops.softmax(logits.flat_values, axis=-1))  # [words, C]
            splits = logits.row_splits.numpy()
            rows += [flat[begin:end] for begin, end in zip(splits[:-1], splits[1:])]
        padded = np.zeros((len(rows), max([len(row) for row in rows], default=0),
                           self.preprocessor.num_tags), "float32")  # [N, W, C]
        for index, row in enumerate(rows):
            padded[index, : len(row)] = row
        return padded

    @staticmethod
    def _check_sentences(sentences):
        if isinstance(sentences, (str, bytes)) or not isinstance(sentences, (list, tuple)):
            raise KseqError("`sentences` must be a list of strings or of word lists. "
                            f"Received: {type(sentences).__name__}")
        for row, sentence in enumerate(sentences):
            if not isinstance(sentence, (str, list, tuple)):
                raise KseqError(f"Sentence {row + 1} must be a string or a list of words. "
                                f"Received: {type(sentence).__name__}")
        return sentences

    def evaluate_tags(self, pairs, batch_size=256):
        """Token accuracy, macro-F1 and per-tag P/R/F1 over `(words, tags)` pairs (words past
        `max_length` characters, which get no tag, are left out), and the sentence
        accuracy (the share of sentences whose every tagged word is right) over
        `sentences`."""
        from kseq.metrics.classification_scores import classification_scores

        pairs = self.preprocessor.check_pairs(pairs)
        predicted = self.tag([sentence for sentence, _ in pairs], batch_size)
        truth, guess, right = [], [], 0
        for (_, tags), (words, found) in zip(pairs, predicted):
            gold = tags.split()[: len(found)]
            truth += [self.tag_names.index(t) for t in gold]
            guess += [self.tag_names.index(t) for t in found]
            right += gold == found
        scores = classification_scores(truth, guess, self.tag_names)
        scores["token_accuracy"] = scores.pop("accuracy")
        scores["sentence_accuracy"] = round(right / len(pairs), 4) if pairs else 0.0
        scores["sentences"] = len(pairs)
        return scores

    def serving_spec(self):
        """What `export` writes: sentences (`serving_default`) or words (`serve_tokens`) in,
        tokens and tags of equal length out; see `kseq.models.tagger.serving`."""
        from kseq.models.tagger.serving import tagger_serving_spec

        return tagger_serving_spec(self)

    # === Recipes, evaluation and the command line (see kseq.models.task) ===

    cli_verbs = ("tag", "evaluate", "export")
    validation_score = "token_accuracy"  # logged each epoch of `kseq train`
    tokenizer_kind = "char"

    def evaluate_pairs(self, pairs, batch_size=256):
        """`evaluate(pairs)`: `evaluate_tags` as an `EvaluationResult`, summarised as
        `token accuracy 0.930 sentence accuracy 0.410 (300 sentences)`."""
        scores = self.evaluate_tags(pairs, batch_size=batch_size)
        return EvaluationResult(scores, [("token accuracy", "token_accuracy"),
                                         ("sentence accuracy", "sentence_accuracy")],
                                count="sentences")

    @classmethod
    def describe(cls, recipe):
        """`"<encoder>+chars"`: the encoder reads characters."""
        return f"{(recipe.get('model') or {}).get('encoder', 'rnn')}+chars"

    @classmethod
    def check_training_rows(cls, recipe, rows, path):
        """One tag per word on each `words<TAB>tags` line, each among the recipe's
        `model.tag_names` when it lists them; `KseqError` naming the file and line. Without
        that list, tags that differ only in case are warned about (each becomes a tag)."""
        known = (recipe.get("model") or {}).get("tag_names")
        for line, words, tags in rows:
            words, tags = words.split(), tags.split()
            if len(words) != len(tags):
                raise KseqError(f"{path} line {line} has {len(words)} words but {len(tags)} "
                                f"tags; give one tag per word, separated by spaces. "
                                f"Received: {' '.join(words)[:80]!r}")
            unknown = [tag for tag in tags if known is not None and tag not in known]
            if unknown:
                raise KseqError(f"{path} line {line}: tags must be among the recipe's "
                                f"model.tag_names {known}. Received: {unknown[0]!r}")
        if known is None:  # the tags come from the data
            warn_case_variants({tag for _, _, tags in rows for tag in tags.split()}, path, "tag")

    @classmethod
    def from_recipe(cls, recipe, train_data=None, vocab=None, labels=None):
        """The compiled tagger `recipe` describes (`build_tagger` of its `model`).

        Args:
            recipe: a recipe dict (`model`, `tokenizer`, `training`, optional `data`).
            train_data: `(words, tags)` pairs (lists, or space-separated
                strings); default: the train split of the recipe's data
                builder, when the vocabulary or the tags are missing.
            vocab: a `CharTokenizer`, character list or file.
            labels: the tags in id order; default: the recipe's
                `model.tag_names` (a rare tag can be missing from the training
                split), else the sorted tags of `train_data`.

        Example:
        >>> import kseq
        >>> recipe = {"task": "tagger", "model": {"encoder": "rnn", "hidden_dim": 8}}
        >>> pairs = [("the dog", "DET NOUN")]
        >>> kseq.models.SequenceTagger.from_recipe(recipe, pairs).tag_names
        ['DET', 'NOUN']
        """
        options = dict(recipe.get("model") or {})
        labels = labels or options.pop("tag_names", None)
        options.pop("tag_names", None)
        if train_data is None and (vocab is None or labels is None) and "data" in recipe:
            train_data = build_data(recipe)["train"]
        if not train_data and (vocab is None or labels is None):
            raise KseqError("Pass `vocab` and `labels`, or training pairs to read them from. "
                            "Received: neither")
        words = [w.split() if isinstance(w, str) else [str(x) for x in w]
                 for w, _ in train_data or []]
        tags = {tag for _, row in train_data or [] for tag in (
            row.split() if isinstance(row, str) else row)}
        # The sentences as the preprocessor reads them (`join_words`), plus the space.
        sentences = [sentence.decode("utf-8") for sentence in join_words(
            tf.ragged.constant(words, dtype=tf.string)).numpy()] if any(words) else []
        tokenizer = make_tokenizer(vocab, {"kind": "char", **(recipe.get("tokenizer") or {})},
                                   sentences + [" "] if sentences else None)
        model = cls.builder(tokenizer, labels or sorted(tags), **options)
        model.recipe = recipe
        return model.compile_from_recipe(recipe.get("training", {}))
