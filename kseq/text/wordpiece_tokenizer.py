"""Subword tokenizer: words (with joiner marks) cut into WordPiece units."""

import collections

import tensorflow as tf
import tensorflow_text as tf_text

from kseq.text.token_marks import JOINER, RESERVED_TOKENS, SUFFIX
from kseq.text.tokenizer import Tokenizer
from kseq.text.word_tokenizer import WordTokenizer
from kseq.text.wordpiece_learning import learn_wordpiece


class WordPieceTokenizer(Tokenizer):
    """WordPiece over `WordTokenizer`'s pieces; detokenisation is exact.

    Words are first split as `WordTokenizer` does (a `￭` joiner marks pieces
    written with no space before them), then each word is cut into the longest
    vocabulary units (`FastWordpieceTokenizer`; continuations start with `##`).
    A word that cannot be cut maps to `<unk>`. The vocabulary is learned with
    tensorflow-text's WordPiece algorithm (`kseq.text.wordpiece_learning`).

    Example:
    >>> import kseq
    >>> corpus = ["les hommes sont partis.", "l'homme est parti !"] * 10
    >>> tok = kseq.text.WordPieceTokenizer.build_vocabulary(corpus, max_size=60)
    >>> tok.detokenize(tok.tokenize(["l'homme est parti."])).numpy()[0].decode()
    "l'homme est parti."
    """

    kind = "wordpiece"

    def __init__(self, vocabulary, lowercase=False, normalization="NFC", name=None):
        super().__init__(vocabulary, lowercase, normalization, name)
        self.word_splitter = WordTokenizer(list(RESERVED_TOKENS), lowercase=False,
                                           normalization=None)
        self.wordpiece = tf_text.FastWordpieceTokenizer(
            vocabulary, suffix_indicator=SUFFIX, unknown_token=RESERVED_TOKENS[1],
            no_pretokenization=True, token_out_type=tf.int32)

    def split_words(self, texts):
        return self.word_splitter.split(texts)

    def tokenize(self, texts):
        texts = tf.convert_to_tensor(texts, tf.string)
        words = self.split_words(self.normalize(texts))  # [B, W]
        return self.wordpiece.tokenize(words).merge_dims(1, 2)  # [B, W, P] -> [B, T]

    def split(self, texts):
        ids = self.tokenize(texts)
        return tf.ragged.map_flat_values(tf.gather, self.token_strings, ids)

    def join(self, pieces):
        text = tf.strings.reduce_join(pieces, axis=-1, separator=" ")
        text = tf.strings.regex_replace(text, " " + SUFFIX, "")
        text = tf.strings.regex_replace(text, " " + JOINER, "")
        return tf.strings.regex_replace(text, "^" + JOINER, "")

    @classmethod
    def build_vocabulary(cls, texts, max_size=8000, min_count=1, batch_size=4096, **options):
        """Learns a WordPiece vocabulary of at most `max_size` entries from `texts`
        (`kseq.text.wordpiece_learning`: tensorflow-text's algorithm, searched faster)."""
        probe = WordTokenizer(list(RESERVED_TOKENS), **options)

        def count(batch):  # words and how often each occurs, counted in the graph
            words = probe.split(probe.normalize(batch)).flat_values
            unique, _, found = tf.unique_with_counts(words)
            return unique, found

        texts = texts if isinstance(texts, list) else list(texts)
        counts = collections.Counter()
        batches = tf.data.Dataset.from_tensor_slices(tf.constant(texts or [""], tf.string)) \
            .batch(batch_size).map(count, num_parallel_calls=tf.data.AUTOTUNE)
        for words, found in batches.as_numpy_iterator():
            counts.update(dict(zip(words.tolist(), found.tolist())))
        word_counts = {word.decode("utf-8"): count for word, count in counts.items()}
        vocabulary = learn_wordpiece(word_counts or {"x": 1}, max_size, list(RESERVED_TOKENS),
                                     joiner=SUFFIX)
        return cls(vocabulary, **options)
