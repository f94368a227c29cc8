"""`TaggerPreprocessor`: words -> characters, one tag per word read at its first character."""

import keras
import tensorflow as tf

from kseq.arguments import check_int
from kseq.errors import KseqError
from kseq.models.preprocessors.preprocessor import Preprocessor, padded_ids
from kseq.text import tokenizer_from_config



def join_words(words):
    """Ragged words `[B, (W)]` -> `[B]` sentences, one space between words (a space or a
    control character inside a word becomes "_", so the word count survives: the
    tokenizer makes control characters spaces)."""
    words = tf.strings.regex_replace(words, r"(\s|\p{Cc})+", "_")
    return tf.strings.reduce_join(words, axis=-1, separator=" ")


@keras.saving.register_keras_serializable(package="kseq")
class TaggerPreprocessor(Preprocessor):
    """Sentences of words -> character ids; a tag label at each word's first character.

    The model reads characters, so a word never seen in training still gets
    a tag from its spelling and its neighbours. Each word's tag is predicted
    at its first character ("first-subword alignment" with characters as the
    subwords); every other position is labelled -1 and ignored by the loss and
    metrics. Words are separated by single spaces (`join_words`); a sentence
    longer than `max_length` characters is cut: only the words that start
    inside the cut get tags (flagged `truncated`).

    Args:
        tokenizer: a `kseq.text.CharTokenizer` whose vocabulary holds " ".
        tag_names: the tags, in id order.
        max_length: longest input, in characters.

    Example:
    >>> import tensorflow as tf, kseq
    >>> tok = kseq.text.CharTokenizer.build_vocabulary(["the dog runs"])
    >>> pre = kseq.models.TaggerPreprocessor(tok, ["DET", "NOUN", "VERB"], 32)
    >>> features, labels = pre(tf.constant(["the dog"]), tf.constant(["DET NOUN"]))
    >>> labels.to_list()
    [[0, -1, -1, -1, 1, -1, -1]]
    """

    label_padding = -1  # tag 0 is a real tag: padded positions hold -1

    def __init__(self, tokenizer, tag_names, max_length=256):
        self.tokenizer = tokenizer
        self.tag_names = [str(name) for name in tag_names]
        if not self.tag_names or len(set(self.tag_names)) != len(self.tag_names):
            raise KseqError(f"`tag_names` must hold distinct names. Received: {tag_names!r}")
        self.max_length = check_int("max_length", max_length)
        if " " not in tokenizer.vocabulary:
            raise KseqError("The tagger's character vocabulary must hold the space that "
                            "separates words. Received: a vocabulary without ' '")
        self.space_id = tokenizer.vocabulary.index(" ")

    @property
    def num_tags(self):
        return len(self.tag_names)

    @property
    def input_signature(self):
        return [tf.TensorSpec([None, None], tf.int32, name="char_ids")]

    def char_ids(self, sentences):
        """`[B]` sentences -> `(ragged character ids cut to max_length, truncated [B])`."""
        ragged = self.tokenizer.tokenize(sentences)
        return ragged[:, : self.max_length], ragged.row_lengths() > self.max_length

    def word_starts(self, ids):
        """Dense `[B, T]` ids -> `[B, T]` bool: the first character of each word."""
        real = tf.logical_and(tf.not_equal(ids, 0), tf.not_equal(ids, self.space_id))
        before = tf.pad(ids[:, :-1], [[0, 0], [1, 0]], constant_values=self.space_id)
        return tf.logical_and(real, tf.equal(before, self.space_id))

    def tag_ids(self, tag_strings):
        """`[B]` space-separated tag names -> ragged `[B, (W)]` int32 ids (unknown -> -1)."""
        names = tf.strings.split(tag_strings)
        found = tf.equal(names.flat_values[:, None], tf.constant(self.tag_names)[None])
        ids = tf.where(tf.reduce_any(found, 1),
                       tf.argmax(tf.cast(found, tf.int32), 1, output_type=tf.int32), -1)
        return names.with_flat_values(ids)

    def __call__(self, sentences, tag_strings):
        """Batched: `[B]` sentences and their tags -> ragged char ids and per-char labels."""
        ragged, _ = self.char_ids(sentences)
        ids = ragged.to_tensor()  # [B, T]
        starts = self.word_starts(ids)
        word = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1  # word index at each start
        tags = self.tag_ids(tag_strings).to_tensor(default_value=-1)  # [B, W]
        tags = tf.pad(tags, [[0, 0], [0, 1]], constant_values=-1)  # room for index -1
        labels = tf.where(starts, tf.gather(tags, tf.maximum(word, 0), batch_dims=1), -1)
        lengths = ragged.row_lengths()
        return ({"char_ids": tf.RaggedTensor.from_tensor(ids, lengths=lengths)},
                tf.RaggedTensor.from_tensor(labels, lengths=lengths))

    def inference_inputs(self, sentences):
        """`[B]` sentences -> `{"char_ids" [B, T], "starts" [B, T], "truncated", "empty"}`."""
        ragged, truncated = self.char_ids(sentences)
        ids, empty = padded_ids(ragged, self.max_length)
        return {"char_ids": ids, "starts": self.word_starts(ids), "truncated": truncated,
                "empty": empty}

    def padded_widths(self):
        return {"char_ids": self.max_length}, self.max_length

    def check_pairs(self, pairs):
        """`(words, tags)` pairs (lists, or space-separated strings) -> `(sentence, tags)`
        strings; `KseqError` naming the first sentence whose counts differ or whose tag is
        unknown."""
        checked = []
        for row, (words, tags) in enumerate(pairs, start=1):
            words = words.split() if isinstance(words, str) else [str(w) for w in words]
            tags = tags.split() if isinstance(tags, str) else [str(t) for t in tags]
            if len(words) != len(tags):
                raise KseqError(f"Sentence {row} has {len(words)} words but {len(tags)} tags. "
                                f"Received: {' '.join(words)[:80]!r}")
            unknown = [tag for tag in tags if tag not in self.tag_names]
            if unknown:
                raise KseqError(f"Sentence {row}: tags must be among {self.tag_names}. "
                                f"Received: {unknown[0]!r}")
            checked.append((" ".join("_".join(w.split()) for w in words), " ".join(tags)))
        return checked

    def to_dataset(self, data):
        if isinstance(data, tf.data.Dataset):
            return data
        pairs = self.check_pairs(data)
        return tf.data.Dataset.from_tensor_slices(
            (tf.constant([s for s, _ in pairs], tf.string),
             tf.constant([t for _, t in pairs], tf.string)))

    def get_config(self):
        return {"tokenizer": self.tokenizer.get_config(), "tag_names": list(self.tag_names),
                "max_length": self.max_length}

    @classmethod
    def from_config(cls, config):
        return cls(**{**config, "tokenizer": tokenizer_from_config(config["tokenizer"])})
