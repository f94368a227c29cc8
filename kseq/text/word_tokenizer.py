"""Word-level tokenizer: words and single punctuation marks, with joiner marks."""

import tensorflow as tf
import tensorflow_text as tf_text

from kseq.text.tokenizer import Tokenizer

JOINER = "\uffed"  # '￭' marks a piece written with no space before it
_PUNCTUATION = r"[^\s\pL\pN]"


class WordTokenizer(Tokenizer):
    """Splits on spaces and around punctuation; detokenisation is exact.

    A piece that had no space before it in the text carries a leading joiner
    `￭`, so `detokenize(tokenize(x)) == x` for space-normalised text, French
    spacing (`"Bonjour !"`, `"l'homme"`) included. Unknown words map to `<unk>`.

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["Bonjour ! l'homme, oui."])
    >>> ids = tok.tokenize(["Bonjour ! l'homme, oui."])
    >>> tok.detokenize(ids).numpy()[0].decode()
    "Bonjour ! l'homme, oui."
    """

    kind = "word"

    def split(self, texts):
        pieces, begins, ends = tf_text.regex_split_with_offsets(
            texts, r"\s+|" + _PUNCTUATION, _PUNCTUATION
        )
        # A piece is attached when it starts where the previous one ended.
        first = tf.ones_like(ends[:, :1]) * -1
        previous_ends = tf.concat([first, ends[:, :-1]], axis=1)
        attached = tf.equal(begins, previous_ends)
        return tf.ragged.map_flat_values(
            lambda p, a: tf.where(a, tf.strings.join([JOINER, p]), p), pieces, attached
        )

    def join(self, pieces):
        text = tf.strings.reduce_join(pieces, axis=-1, separator=" ")
        text = tf.strings.regex_replace(text, " " + JOINER, "")
        return tf.strings.regex_replace(text, "^" + JOINER, "")
