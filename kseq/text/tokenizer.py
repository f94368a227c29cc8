"""In-graph tokenizers: strings in, ids out, and back, with no Python in the graph.

Reserved ids: `<pad>`=0, `<unk>`=1, `<s>`=2, `</s>`=3.
"""

import collections

import tensorflow as tf
import tensorflow_text as tf_text

from kseq.text.control_characters import replace_control_characters_in_graph
from kseq.text.plain_tokenizer import normal_form
from kseq.text.token_marks import END_ID, PAD_ID, RESERVED_TOKENS, START_ID, UNK_ID  # noqa: F401


class Tokenizer(tf.Module):
    """Base class: normalisation, vocabulary lookup, detokenisation.

    Subclasses define `split(texts) -> RaggedTensor[string]` and
    `join(pieces) -> [B] string`. Instances are `tf.Module`s so that an exported
    model tracks their lookup tables.

    Args:
        vocabulary: list of tokens; the first four must be the reserved tokens.
        lowercase: lower-case the text before splitting.
        normalization: Unicode normal form (`"NFC"`, `"NFKC"`, ...) or None.
    """

    kind = None

    def __init__(self, vocabulary, lowercase=False, normalization="NFC", name=None):
        super().__init__(name=name or f"{self.kind}_tokenizer")
        vocabulary = list(vocabulary)
        if tuple(vocabulary[:4]) != RESERVED_TOKENS:
            raise ValueError(
                f"A vocabulary must start with the reserved tokens {list(RESERVED_TOKENS)}. "
                f"Received: vocabulary[:4]={vocabulary[:4]}"
            )
        repeated = sorted(t for t, n in collections.Counter(vocabulary).items() if n > 1)
        if repeated:
            raise ValueError(f"A vocabulary must not repeat tokens. Received: repeated "
                             f"{repeated[:10]}")
        self.vocabulary = vocabulary
        self.lowercase = lowercase
        normal_form(normalization)  # a bad name fails here, not at the first batch
        self.normalization = normalization
        self.token_strings = tf.constant(vocabulary)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                self.token_strings, tf.range(len(vocabulary), dtype=tf.int32)
            ),
            default_value=UNK_ID,
        )

    @property
    def vocabulary_size(self):
        return len(self.vocabulary)

    def normalize(self, texts):
        """Invalid UTF-8 -> U+FFFD, control characters -> spaces, Unicode normal form,
        optional lower-case, trimmed spaces.

        Control characters go first: `tf.strings.lower` drops everything after a
        NUL (`kseq.text.control_characters`).
        """
        texts = tf.strings.unicode_transcode(
            texts, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
        )
        texts = replace_control_characters_in_graph(texts)
        if self.normalization:
            texts = tf_text.normalize_utf8(texts, self.normalization)
        if self.lowercase:
            texts = tf.strings.lower(texts, encoding="utf-8")
        texts = tf.strings.regex_replace(texts, r"\s+", " ")
        return tf.strings.strip(texts)

    def split(self, texts):
        raise NotImplementedError

    def join(self, pieces):
        raise NotImplementedError

    def tokenize(self, texts):
        """`[B]` strings -> ragged int32 ids `[B, None]` (no start/end tokens)."""
        texts = tf.convert_to_tensor(texts, tf.string)
        pieces = self.split(self.normalize(texts))
        return tf.ragged.map_flat_values(self.table.lookup, pieces)

    def detokenize(self, ids):
        """ids `[B, T]` (dense or ragged) -> `[B]` strings.

        Reads each row up to its first `</s>` and drops `<pad>`, `<s>`.
        """
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.RaggedTensor.from_tensor(tf.convert_to_tensor(ids, tf.int32))
        ids = tf.cast(ids, tf.int32)
        ended = tf.cumsum(tf.cast(tf.equal(ids, END_ID), tf.int32), axis=1) > 0
        keep = tf.logical_and(tf.logical_not(ended), tf.not_equal(ids, PAD_ID))
        keep = tf.logical_and(keep, tf.not_equal(ids, START_ID))
        kept = tf.ragged.boolean_mask(ids, keep)
        pieces = tf.ragged.map_flat_values(tf.gather, self.token_strings, kept)
        return self.join(pieces)

    def get_config(self):
        return {
            "kind": self.kind,
            "vocabulary": self.vocabulary,
            "lowercase": self.lowercase,
            "normalization": self.normalization,
        }

    @classmethod
    def build_vocabulary(cls, texts, max_size=None, min_count=1, batch_size=4096, **options):
        """Counts the pieces of `texts` with the same in-graph split, most frequent first.

        Ties are broken by the token itself, so the result is deterministic.
        Returns a new tokenizer.
        """
        probe = cls(list(RESERVED_TOKENS), **options)
        counts = collections.Counter()
        texts = list(texts)
        for start in range(0, len(texts), batch_size):
            pieces = probe.split(probe.normalize(tf.constant(texts[start : start + batch_size])))
            counts.update(p.decode("utf-8") for p in pieces.flat_values.numpy())
        ranked = sorted(
            (t for t, c in counts.items() if c >= min_count and t not in RESERVED_TOKENS),
            key=lambda t: (-counts[t], t),
        )
        if max_size is not None:
            ranked = ranked[: max(0, max_size - len(RESERVED_TOKENS))]
        return cls(list(RESERVED_TOKENS) + ranked, **options)
