"""Subword tokenizer: words (with joiner marks) cut into WordPiece units."""

import tensorflow as tf
import tensorflow_text as tf_text

from kseq.text.token_marks import JOINER, RESERVED_TOKENS, SUFFIX
from kseq.text.tokenizer import Tokenizer
from kseq.text.word_tokenizer import WordTokenizer


class WordPieceTokenizer(Tokenizer):
    """WordPiece over `WordTokenizer`'s pieces; detokenisation is exact.

    Words are first split as `WordTokenizer` does (a `￭` joiner marks pieces
    written with no space before them), then each word is cut into the longest
    vocabulary units (`FastWordpieceTokenizer`; continuations start with `##`).
    A word that cannot be cut maps to `<unk>`. The vocabulary is learned with
    keras-hub's `compute_word_piece_vocabulary`.

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
        """Learns a WordPiece vocabulary of at most `max_size` entries from `texts`."""
        import keras_hub

        probe = WordTokenizer(list(RESERVED_TOKENS), **options)
        words = []
        texts = list(texts)
        for start in range(0, len(texts), batch_size):
            split = probe.split(probe.normalize(tf.constant(texts[start : start + batch_size])))
            words.extend(split.flat_values.numpy().tolist())
        vocabulary = keras_hub.tokenizers.compute_word_piece_vocabulary(
            # Batched: the learner counts words one dataset element at a time in Python.
            tf.data.Dataset.from_tensor_slices(words or [b"x"]).batch(batch_size),
            vocabulary_size=max_size,
            lowercase=False, strip_accents=False, split=False, suffix_indicator=SUFFIX,
            reserved_tokens=list(RESERVED_TOKENS))
        return cls(vocabulary, **options)
