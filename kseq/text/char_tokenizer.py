"""Character-level tokenizer."""

import tensorflow as tf

from kseq.text.tokenizer import Tokenizer


class CharTokenizer(Tokenizer):
    """One piece per Unicode character (spaces included); detokenisation is exact.

    Example:
    >>> import kseq
    >>> tok = kseq.text.CharTokenizer.build_vocabulary(["vingt et un"])
    >>> tok.detokenize(tok.tokenize(["un et vingt"])).numpy()[0].decode()
    'un et vingt'
    """

    kind = "char"

    def split(self, texts):
        return tf.strings.unicode_split(texts, "UTF-8")

    def join(self, pieces):
        return tf.strings.reduce_join(pieces, axis=-1, separator="")
