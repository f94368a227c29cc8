"""Length bucketing that pads to a small fixed set of shapes.

XLA compiles once per input shape, so every batch is padded to one of the
boundaries on the time axes and to its bucket's batch size on the batch axis
(padding rows are all `<pad>`, which the loss and metrics ignore). Every example
is kept exactly once.
"""

import numbers

import tensorflow as tf

from kseq.arguments import check_int
from kseq.errors import KseqError


def _example_length(features, labels):
    return tf.maximum(tf.shape(features["source_ids"])[0], tf.shape(features["decoder_ids"])[0])


def bucket_batch_sizes(boundaries, batch_size=None, token_budget=None):
    """Batch size per bucket: fixed, or `token_budget // boundary` tokens a batch."""
    boundaries = check_boundaries(boundaries)
    if (batch_size is None) == (token_budget is None):
        raise KseqError("Pass exactly one of `batch_size` and `token_budget`. "
                        f"Received: batch_size={batch_size}, token_budget={token_budget}")
    if batch_size is not None:
        return [check_int("batch_size", batch_size, minimum=1)] * len(boundaries)
    token_budget = check_int("token_budget", token_budget, minimum=1)
    return [max(1, token_budget // b) for b in boundaries]


def check_boundaries(boundaries):
    """`boundaries` as a sorted list if it is a non-empty list of integers >= 1."""
    values = None
    if not isinstance(boundaries, (str, bytes)) and hasattr(boundaries, "__iter__"):
        values = list(boundaries)
    if not values or any(isinstance(b, bool) or not isinstance(b, numbers.Integral) or b < 1
                         for b in values):
        raise KseqError("`boundaries` must be a non-empty list of integers >= 1. "
                        f"Received: boundaries={boundaries!r}")
    return sorted(int(b) for b in values)


def filter_by_length(max_length):
    """Drops examples whose source or target is longer than `max_length` (for `apply`)."""
    max_length = check_int("max_length", max_length, minimum=1)

    def apply(dataset):
        return dataset.filter(lambda f, l: _example_length(f, l) <= max_length)
    return apply


def bucket_by_length(boundaries, batch_size=None, token_budget=None):
    """Groups examples by length and pads each batch to `[batch, boundary]` (for `apply`).

    Examples longer than the last boundary must be filtered or truncated first.
    """
    boundaries = check_boundaries(boundaries)
    sizes = bucket_batch_sizes(boundaries, batch_size, token_budget)
    boundary_tensor = tf.constant(boundaries, tf.int64)
    size_tensor = tf.constant(sizes, tf.int64)

    def key(features, labels):
        length = tf.cast(_example_length(features, labels), tf.int64)
        return tf.reduce_sum(tf.cast(boundary_tensor < length, tf.int64))

    def reduce(bucket, window):
        length = boundary_tensor[bucket]
        shapes = ({"source_ids": [length], "decoder_ids": [length]}, [length])
        batched = window.padded_batch(size_tensor[bucket], padded_shapes=shapes)
        return batched.map(lambda f, l: _pad_rows(f, l, size_tensor[bucket]))

    def apply(dataset):
        return dataset.group_by_window(key, reduce, window_size_func=lambda b: size_tensor[b])

    return apply


def _pad_rows(features, labels, rows):
    missing = tf.cast(rows, tf.int32) - tf.shape(labels)[0]
    pad = lambda x: tf.pad(x, [[0, missing], [0, 0]])
    return {name: pad(value) for name, value in features.items()}, pad(labels)
