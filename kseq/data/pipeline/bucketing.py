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


def example_length(features, labels):
    """The longest sequence of one example: its 1-D features, and its labels when 1-D.

    Works for any feature names (`{"source_ids", "decoder_ids"}`, `{"token_ids"}`);
    a preprocessor may bring its own.
    """
    sequences = [x for x in tf.nest.flatten(features) + [labels] if x.shape.rank == 1]
    if not sequences:
        raise ValueError("Bucketing needs at least one 1-D feature or label. Received: "
                         f"features={features!r}")
    return tf.reduce_max(tf.stack([tf.shape(x)[0] for x in sequences]))


def batched_example_lengths(features, labels):
    """`example_length` of every example of a batch at once: `[B]` int64.

    Sequences of the batch are ragged `[B, (L)]` or dense `[B, L]` (each example's
    1-D tensors); `[B]` class labels and images `[B, H, W, C]` do not count.
    """
    lengths = []
    for x in tf.nest.flatten(features) + [labels]:
        if isinstance(x, tf.RaggedTensor) and x.shape.rank == 2:
            lengths.append(x.row_lengths())
        elif not isinstance(x, tf.RaggedTensor) and x.shape.rank == 2:
            lengths.append(tf.fill(tf.shape(x)[:1], tf.cast(tf.shape(x)[1], tf.int64)))
    if not lengths:
        raise ValueError("Bucketing needs at least one 1-D feature or label. Received: "
                         f"features={features!r}")
    return tf.reduce_max(tf.stack(lengths), axis=0)


def count_bucketed_chunks(chunks, boundaries, batch_size=None, token_budget=None):
    """`count_bucketed_batches` for a dataset of *batches* of examples (a token store's
    chunks), lengths by `example_length` computed a batch at a time; examples longer than
    the last boundary are not counted, as `filter_by_length` drops them."""
    boundaries = check_boundaries(boundaries)
    sizes = bucket_batch_sizes(boundaries, batch_size, token_budget)
    boundary_tensor = tf.constant(boundaries, tf.int64)
    buckets = len(boundaries)

    def bucket_counts(features, labels):
        lengths = batched_example_lengths(features, labels)  # [B]
        kept = lengths[lengths <= boundary_tensor[-1]]
        keys = tf.reduce_sum(tf.cast(boundary_tensor[None] < kept[:, None], tf.int64), axis=1)
        return tf.math.bincount(keys, minlength=buckets, maxlength=buckets, dtype=tf.int64)

    counts = chunks.map(bucket_counts, num_parallel_calls=tf.data.AUTOTUNE).reduce(
        tf.zeros([buckets], tf.int64), lambda total, count: total + count)
    return sum(-(-int(count) // size) for count, size in zip(counts.numpy(), sizes))


def count_fitting_chunks(chunks, max_length):
    """`(kept, dropped)`: how many examples of a dataset of batches (a token store's chunks)
    are at most `max_length` long by `example_length`, and how many `filter_by_length`
    drops.

    Example:
    >>> import tensorflow as tf
    >>> rows = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[4], [5, 6], [6, 7, 8]]))
    >>> count_fitting_chunks(rows.map(lambda ids: ({"token_ids": ids}, ids)).ragged_batch(2), 2)
    (2, 1)
    """
    limit = tf.constant(check_int("max_length", max_length), tf.int64)

    def counts(features, labels):
        fits = batched_example_lengths(features, labels) <= limit  # [B]
        return tf.stack([tf.reduce_sum(tf.cast(fits, tf.int64)),
                         tf.reduce_sum(tf.cast(~fits, tf.int64))])

    total = chunks.map(counts, num_parallel_calls=tf.data.AUTOTUNE).reduce(
        tf.zeros([2], tf.int64), lambda total, count: total + count)
    kept, dropped = total.numpy().tolist()
    return kept, dropped


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


def filter_by_length(max_length, length_fn=example_length):
    """Drops examples longer than `max_length` by `length_fn(features, labels)` (for `apply`)."""
    max_length = check_int("max_length", max_length, minimum=1)

    def apply(dataset):
        return dataset.filter(lambda f, l: length_fn(f, l) <= max_length)
    return apply


def bucket_by_length(boundaries, batch_size=None, token_budget=None, length_fn=example_length,
                     widths=None, label_padding=None):
    """Groups examples by length and pads each batch to `[batch, boundary]` (for `apply`).

    Every 1-D tensor of an example is padded to the bucket's boundary, or to
    its own longest width where `widths` gives one (a structure like the
    examples', with ints or None: a translator's source never needs more than
    `max_source_length` columns, whatever the target's bucket); scalars (class
    labels) and tensors of rank >= 2 (images) keep their shape. Label
    sequences are padded with `label_padding` (default 0, `<pad>`; a tagger,
    whose tag 0 is a real class, passes -1). Examples longer than the last
    boundary must be filtered or truncated first.

    Example:
    >>> import tensorflow as tf
    >>> rows = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[4, 5], [6, 7, 8, 9, 5]]))
    >>> data = rows.map(lambda ids: ({"token_ids": ids}, tf.size(ids)))
    >>> batches = data.apply(bucket_by_length([4, 8], batch_size=2))
    >>> [tuple(f["token_ids"].shape) + tuple(y.shape) for f, y in batches]
    [(2, 4, 2), (2, 8, 2)]
    >>> [y.numpy().tolist() for _, y in batches]  # one example a bucket: a padding row, -1
    [[2, -1], [5, -1]]
    """
    boundaries = check_boundaries(boundaries)
    sizes = bucket_batch_sizes(boundaries, batch_size, token_budget)
    boundary_tensor = tf.constant(boundaries, tf.int64)
    size_tensor = tf.constant(sizes, tf.int64)
    key = _bucket_key(boundaries, length_fn)

    def reduce(bucket, window):
        length = boundary_tensor[bucket]
        limits = _limits(window.element_spec, widths)

        def shape(spec, limit):
            if spec.shape.rank != 1:  # scalars (class labels) and images keep their shape
                return spec.shape
            return [length if limit is None else tf.minimum(length, tf.constant(limit, tf.int64))]

        shapes = tf.nest.map_structure(shape, window.element_spec, limits)
        values = None
        if label_padding is not None:
            features_spec, labels_spec = window.element_spec
            values = (tf.nest.map_structure(lambda spec: tf.constant(0, spec.dtype),
                                            features_spec),
                      tf.constant(label_padding, labels_spec.dtype))
        batched = window.padded_batch(size_tensor[bucket], padded_shapes=shapes,
                                      padding_values=values)
        return batched.map(lambda f, l: _pad_rows(f, l, size_tensor[bucket], label_padding))

    def apply(dataset):
        return dataset.group_by_window(key, reduce, window_size_func=lambda b: size_tensor[b])

    return apply


def count_bucketed_batches(dataset, boundaries, batch_size=None, token_budget=None,
                           length_fn=example_length):
    """Batches `bucket_by_length(...)` makes of the finite `dataset`, in any order.

    Each bucket gives `ceil(examples / its batch size)` batches (full windows,
    then one partial window at the end of the input), so the count is the same
    for every shuffle. Examples longer than the last boundary are not counted:
    filter them first, as `bucket_by_length` needs.

    Example:
    >>> import tensorflow as tf
    >>> rows = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[4], [5], [6, 7, 8]]))
    >>> count_bucketed_batches(rows.map(lambda ids: ({"token_ids": ids}, ids)), [2, 4],
    ...                        batch_size=1)
    3
    """
    boundaries = check_boundaries(boundaries)
    sizes = bucket_batch_sizes(boundaries, batch_size, token_budget)
    key = _bucket_key(boundaries, length_fn)
    buckets = len(boundaries)
    counts = dataset.map(key, num_parallel_calls=tf.data.AUTOTUNE).reduce(
        tf.zeros([buckets], tf.int64),
        lambda count, bucket: count + tf.one_hot(bucket, buckets, dtype=tf.int64))  # [buckets]
    return sum(-(-int(count) // size) for count, size in zip(counts.numpy(), sizes))


def _bucket_key(boundaries, length_fn):
    """`(features, labels)` -> the index of the first boundary >= the example's length."""
    boundary_tensor = tf.constant(boundaries, tf.int64)

    def key(features, labels):
        length = tf.cast(length_fn(features, labels), tf.int64)
        return tf.reduce_sum(tf.cast(boundary_tensor < length, tf.int64))
    return key


def _limits(spec, widths):
    """Per-tensor width limits shaped like the examples; features `widths` does not name
    (a dict of fewer keys: a captioner's cached features) have none."""
    if widths is None:
        return tf.nest.map_structure(lambda _: None, spec)
    (feature_spec, _), (feature_widths, label_width) = spec, widths
    if isinstance(feature_spec, dict) and isinstance(feature_widths, dict):
        feature_widths = {name: feature_widths.get(name) for name in feature_spec}
    return feature_widths, label_width


def _pad_rows(features, labels, rows, label_padding=None):
    """Pads the batch axis to `rows` (the bucket's batch size) with padding rows.

    Padding rows hold id 0 (`<pad>`); a class label, which has no padding id,
    gets -1 there (`MaskedSparseCrossEntropy(pad_id=-1)` ignores it). Images
    (features of rank 4) repeat the batch's own rows instead: their labels are
    padding all the same, but a trainable batch norm computes its statistics
    over every row, and black padding images would skew them.
    """
    present = tf.shape(labels)[0]
    missing = tf.cast(rows, tf.int32) - present

    def pad(x, value=0):
        if x.shape.rank == 4:  # [B, H, W, C] pixels: copies of real rows
            return tf.concat([x, tf.gather(x, tf.range(missing) % present)], axis=0)
        return tf.pad(x, [[0, missing]] + [[0, 0]] * (x.shape.rank - 1), constant_values=value)

    if label_padding is None:
        label_padding = -1 if labels.shape.rank == 1 else 0
    return tf.nest.map_structure(pad, features), pad(labels, label_padding)
