"""Word-level tokenizer: words and single punctuation marks, with joiner marks."""

import tensorflow as tf
import tensorflow_text as tf_text

from kseq.text.token_marks import JOINER, PUNCTUATION_PATTERN as _PUNCTUATION
from kseq.text.tokenizer import Tokenizer


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
        # A piece is attached when it starts where the previous piece of its row ended.
        # Flat index arithmetic rather than ragged slicing and comparison: those trace
        # broadcasting checks (a second of graph building for every tokenizer call).
        flat_begins, flat_ends = begins.flat_values, ends.flat_values
        index = tf.range(tf.size(flat_ends, out_type=tf.int64), dtype=tf.int64)
        first_in_row = tf.equal(index, tf.gather(ends.row_splits, ends.value_rowids()))
        previous_ends = tf.concat([tf.constant([-1], flat_ends.dtype), flat_ends[:-1]], axis=0)
        attached = tf.logical_and(tf.logical_not(first_in_row),
                                  tf.equal(flat_begins, previous_ends))
        flat = pieces.flat_values
        return pieces.with_flat_values(tf.where(attached, tf.strings.join([JOINER, flat]), flat))

    def join(self, pieces):
        text = tf.strings.reduce_join(pieces, axis=-1, separator=" ")
        text = tf.strings.regex_replace(text, " " + JOINER, "")
        return tf.strings.regex_replace(text, "^" + JOINER, "")
