"""Strings -> ids for training, in graph mode inside `dataset.map` (no `py_function`)."""

import logging

import tensorflow as tf

from kseq.data.bucketing import bucket_by_length, filter_by_length
from kseq.data.parallel_text import pairs_to_dataset
from kseq.text.tokenizer import END_ID, START_ID

logger = logging.getLogger("kseq")


class TranslatorPreprocessor:
    """Tokenises `(source, target)` strings and applies the teacher-forcing shift.

    The decoder input is `<s> y` and the label `y </s>`; sources are cut to
    `max_source_length` and targets to `max_target_length - 1` tokens.

    Example:
    >>> import tensorflow as tf, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two", "un deux"])
    >>> pre = kseq.models.TranslatorPreprocessor(tok, tok, 8, 8)
    >>> features, labels = pre(tf.constant(["one two"]), tf.constant(["un deux"]))
    >>> features["decoder_ids"].numpy()[0].tolist()[0] == kseq.text.START_ID
    True
    """

    def __init__(self, source_tokenizer, target_tokenizer, max_source_length, max_target_length):
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length

    def __call__(self, sources, targets):
        """Batched: `[B]` strings -> ragged features and labels."""
        source_ids = self.source_tokenizer.tokenize(sources)[:, : self.max_source_length]
        target_ids = self.target_tokenizer.tokenize(targets)[:, : self.max_target_length - 1]
        rows = target_ids.nrows()
        start = tf.fill([rows, 1], START_ID)
        end = tf.fill([rows, 1], END_ID)
        decoder_ids = tf.concat([start, target_ids], axis=1)
        labels = tf.concat([target_ids, end], axis=1)
        return {"source_ids": source_ids, "decoder_ids": decoder_ids}, labels

    def tokenized(self, data, chunk=1024):
        """String pairs (a list or a `tf.data.Dataset`) -> unbatched id examples."""
        dataset = pairs_to_dataset(data) if isinstance(data, (list, tuple)) else data
        return (
            dataset.batch(chunk)
            .map(self, num_parallel_calls=tf.data.AUTOTUNE)
            .unbatch()
            .map(_dense_example, num_parallel_calls=tf.data.AUTOTUNE)
        )

    def training_dataset(self, data, boundaries, batch_size=None, token_budget=None,
                         shuffle=True, seed=0, repeat=False):
        """String pairs -> bucketed, padded, prefetched batches for `fit`."""
        dataset = self.tokenized(data)
        dataset = dataset.apply(filter_by_length(max(boundaries)))
        if shuffle:
            dataset = dataset.shuffle(20000, seed=seed, reshuffle_each_iteration=True)
        if repeat:
            dataset = dataset.repeat()
        dataset = dataset.apply(bucket_by_length(boundaries, batch_size, token_budget))
        return dataset.prefetch(tf.data.AUTOTUNE)


def _as_dense(x):
    return x.to_tensor() if isinstance(x, tf.RaggedTensor) else x


def _dense_example(features, labels):
    """Unbatched ragged rows come out with a ragged spec; `padded_batch` needs dense ones."""
    return {k: _as_dense(v) for k, v in features.items()}, _as_dense(labels)
