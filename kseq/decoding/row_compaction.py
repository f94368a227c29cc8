"""Finished-row compaction: a search stops computing the rows it has finished.

The rows of a batch end at different lengths, and a search loop runs until
its longest row ends: without compaction every finished row is still decoded
(and ignored) at every later step — at batch 64 on the LibreOffice slice,
1.93x the useful row-steps (issue #33). With compaction, an iteration that
starts with at least `SHARE` of its running units done (checked every step:
one sum over `done`) first writes every running unit's results into the
full-size outputs at its original row, then gathers the units still running
out of every per-unit tensor: decoder state (KV caches included), memory,
input tokens, per-row limits and prompts, running scores and lengths. A map
`rows [R]` from running units to original rows says where results go; the
loop's end writes the rest. Compaction happens a few times per batch (each
time the running rows shrink by a quarter or more); a `SHARE` of 0.1 or 0.5
measured the same as 0.25 within the noise (LibreOffice preset, batch 64).

A unit is a row (greedy search) or a source sentence with its `K` beams
(beam search: its rows `[R·K]` keep the beam layout).

A row's step output depends on its own inputs only (the step protocol has no
cross-row op), so the outputs are those of the uncompacted search, up to
float rounding: a kernel run on fewer rows can round a row's sums differently
in the last bits (vector body vs scalar tail), so scores may differ by an ulp
or a few (1e-5 at most on the LibreOffice slice); ids and lengths were
identical in every check (the tests; the slice, greedy and beam 4).

Loop shapes then have a free batch axis: not under XLA (`jit_compile`), which
needs fixed shapes — the model's search turns compaction off there. Sampling
keeps it off: a stateless draw depends on a row's position in the batch.

Shape letters: `B` batch (units), `R` running units, `K` rows per unit.
"""

import tensorflow as tf

#: The share of running units that must be done before the search compacts.
SHARE = 0.25


def tensor_leaves(structure):
    """`(leaves, rebuild)`: the non-None leaves of `structure` (a loop can carry
    them: a decoder-only memory holds None cross-attention entries) and a function
    that puts new leaves back in their places."""
    flat = tf.nest.flatten(structure)
    leaves = [x for x in flat if x is not None]

    def rebuild(new_leaves):
        new = iter(new_leaves)
        return tf.nest.pack_sequence_as(structure, [None if x is None else next(new)
                                                    for x in flat])

    return leaves, rebuild


def free_batch(shapes):
    """`shapes` (a nest of `tf.TensorShape`) with the batch axis None: the shape
    invariants of loop values that compaction gathers."""
    flat = [tf.TensorShape([None] + shape.as_list()[1:]) for shape in tf.nest.flatten(shapes)]
    return tf.nest.pack_sequence_as(shapes, flat)


def put_rows(results, rows, values):
    """Writes `values [R, ...]` into `results [B, ...]` at `rows [R]`, leaf by leaf."""
    return tf.nest.map_structure(
        lambda full, part: tf.tensor_scatter_nd_update(full, rows[:, None], part),
        results, values)


def take_rows(structure, indices):
    """Every tensor of `structure` at `indices` on its batch axis."""
    return tf.nest.map_structure(lambda x: tf.gather(x, indices), structure)


def compaction_due(done):
    """Scalar bool: at least `SHARE` of the running units (and one) are done, not all."""
    finished = tf.reduce_sum(tf.cast(done, tf.int32))
    running = tf.size(done)
    enough = tf.cast(finished, tf.float32) >= SHARE * tf.cast(running, tf.float32)
    return (finished > 0) & (finished < running) & enough


def compact(done, rows, results, finals, units, grouped=(), group=1):
    """Writes `finals` into `results`, then keeps the units not `done`.

    Args:
        done: bool `[R]`; rows: int32 `[R]`, each running unit's original row.
        results: nest of `[B, ...]` outputs; finals: the same nest, `[R, ...]`.
        units: nest of other `[R, ...]` tensors; grouped: nest of `[R·K, ...]`
            tensors (`K = group` consecutive rows per unit).

    Returns:
        `(done, rows, results, finals, units, grouped)` over the `R'` units kept.
    """
    results = put_rows(results, rows, finals)
    keep = tf.cast(tf.where(tf.logical_not(done))[:, 0], tf.int32)  # [R']
    keep_rows = tf.reshape(keep[:, None] * group + tf.range(group)[None, :], [-1])  # [R'·K]
    return (tf.gather(done, keep), tf.gather(rows, keep), results, take_rows(finals, keep),
            take_rows(units, keep), take_rows(grouped, keep_rows))


def maybe_compact(done, rows, results, finals, units, grouped=(), group=1):
    """`compact(...)` when `compaction_due(done)`, else everything as it is."""
    arguments = (done, rows, results, finals, units, grouped)
    return tf.cond(compaction_due(done),
                   lambda: compact(*arguments, group=group),
                   lambda: arguments)
