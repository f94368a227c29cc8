"""Pieces shared by greedy, beam and sampling search.

The searches are `tf.while_loop`s over TF tensors (graph size independent of
`max_length`, exportable without XLA), so this package uses `tf` directly: the
loop, `tf.gather(..., batch_dims)` and `tf.scatter_nd` have no `keras.ops` twin.

Shape letters: `B` batch, `K` beams, `N` = B·K rows seen by the step function,
`T` `max_length`, `V` vocabulary, `S` source length.
"""

import tensorflow as tf

from kseq.decoding.row_compaction import free_batch

NEG_INF = float("-inf")


def check_search_arguments(*, max_length, end_id, min_length=0):
    """Validates arguments every search shares; raises `ValueError` naming the argument."""
    if isinstance(max_length, int) and max_length < 1:
        raise ValueError(f"`max_length` must be >= 1. Received: max_length={max_length}")
    if isinstance(max_length, int) and min_length > max_length:
        raise ValueError(
            "`max_length` must be >= `min_length`. "
            f"Received: max_length={max_length}, min_length={min_length}"
        )
    if min_length < 0:
        raise ValueError(f"`min_length` must be >= 0. Received: min_length={min_length}")
    if end_id < 0:
        raise ValueError(f"`end_id` must be a vocabulary id >= 0. Received: end_id={end_id}")


def check_end_id(end_id, vocab_size):
    """Called once the step's vocabulary size is known (at trace time)."""
    if vocab_size is not None and end_id >= vocab_size:
        raise ValueError(
            f"`end_id` must be < the vocabulary size {vocab_size}. Received: end_id={end_id}"
        )


def tile_rows(structure, times):
    """Repeats every row of each tensor `times` times: `[B, ...] -> [B·times, ...]`
    (None entries, e.g. a decoder-only memory's cross-attention, stay None)."""
    if times == 1:
        return structure
    return tf.nest.map_structure(lambda x: None if x is None else tf.repeat(x, times, axis=0),
                                 structure)


def row_length_limits(batch_size, max_length, memory, source_lengths, max_length_a, max_length_b):
    """Per-row maximum output length `[B]`: `min(max_length, a·source_length + b)`."""
    limit = tf.fill([batch_size], tf.cast(max_length, tf.int32))
    if max_length_a is None and max_length_b is None:
        return limit
    if source_lengths is None:
        if not isinstance(memory, dict) or "mask" not in memory:
            raise ValueError(
                "`max_length_a`/`max_length_b` need `source_lengths` or memory['mask']. "
                "Received: source_lengths=None"
            )
        source_lengths = tf.reduce_sum(tf.cast(memory["mask"], tf.int32), axis=1)
    a = 0.0 if max_length_a is None else float(max_length_a)
    b = 0.0 if max_length_b is None else float(max_length_b)
    by_source = tf.cast(tf.floor(a * tf.cast(source_lengths, tf.float32) + b), tf.int32)
    return tf.clip_by_value(by_source, 1, limit)


def block_end_before_min_length(log_probs, t, min_length, end_id):
    """Sets the end token's log-probability to -inf while `t < min_length`."""
    if not min_length:
        return log_probs
    vocab = tf.shape(log_probs)[-1]
    is_end = tf.equal(tf.range(vocab), end_id)[None, :]
    return tf.where(tf.logical_and(t < min_length, is_end), NEG_INF, log_probs)


def write_column(sequences, t, tokens):
    """Returns `sequences [..., T]` with column `t` set to `tokens [...]` (no XLA op)."""
    length = tf.shape(sequences)[-1]
    at_t = tf.equal(tf.range(length), t)
    return tf.where(at_t, tokens[..., None], sequences)


def log_softmax_float32(logits):
    """Scores stay float32 even when the step returns bfloat16/float16 logits."""
    return tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)


def static_or_dynamic_batch(start_ids):
    """The batch size as a Python int when known, so loop shapes stay static."""
    static = start_ids.shape[0]
    return static if static is not None else tf.shape(start_ids)[0]


def loop_shapes(loop_vars, state_index, state_shapes, free_batch_indices=()):
    """`shape_invariants` for a search's `tf.while_loop`, or None when every loop value
    keeps its shape.

    `state_shapes` mirrors the state with a spec per tensor (anything with a
    `.shape`, e.g. a `keras.KerasTensor`); a None axis may change from step to
    step (a KV cache that grows in blocks). The batch axis is the state's own:
    beam search tiles the state after the caller described it. The loop values
    at `free_batch_indices` get a free batch axis (finished-row compaction, see
    `row_compaction.py`).
    """
    if state_shapes is None and not free_batch_indices:
        return None
    shapes = [tf.nest.map_structure(lambda x: x.shape, v) for v in loop_vars]
    if state_shapes is not None:
        shapes[state_index] = tf.nest.map_structure(
            lambda x, spec: tf.TensorShape([x.shape[0]] + list(spec.shape)[1:]),
            loop_vars[state_index], state_shapes)
    for index in free_batch_indices:
        shapes[index] = free_batch(shapes[index])
    return tuple(shapes)
