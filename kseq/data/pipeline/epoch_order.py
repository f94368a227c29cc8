"""Training batches whose order is a function of (seed, epoch), so a resumed run
continues the data exactly where the interrupted one stopped.

`tf.data`'s `reshuffle_each_iteration` derives each epoch's order from how many
times the dataset was iterated, which a new process cannot reproduce; Keras
3.15's `BackupAndRestore` also restarts an interrupted epoch from its first
batch. Here the examples are held in memory (`ExampleTable`, ragged rows) and
epoch `e` reads them in the stateless permutation `index_shuffle(i, [seed, e])`
(independent of TensorFlow's global seed). The bucketing is deterministic, so
every epoch has the same number of batches (each bucket gives
`ceil(examples / batch size)` whatever the order), and a run at optimizer step
`s` is at batch `s % n` of epoch `s // n`.

Example:
>>> import tensorflow as tf
>>> from kseq.data.pipeline.epoch_order import ExampleTable, epoch_ordered_batches
>>> table = ExampleTable(tf.data.Dataset.range(6))
>>> batch = lambda dataset: dataset.batch(3)
>>> full = [b.numpy().tolist() for b in epoch_ordered_batches(table, batch, seed=0, epochs=(0, 2))]
>>> resumed = epoch_ordered_batches(table, batch, seed=0, epochs=(1, 2), skip_batches=1)
>>> [b.numpy().tolist() for b in resumed] == full[3:]
True
>>> sorted(sum(full[:2], []))
[0, 1, 2, 3, 4, 5]
"""

import tensorflow as tf

# More rows than an in-memory table holds. Read with `get_single_element`: a Python
# iterator over such a batch of ragged string rows never returned (TF 2.21).
_LARGER_THAN_ANY_DATASET = 2**31 - 1


class ExampleTable:
    """Every example of a finite dataset, held as (nested) ragged rows for random access."""

    def __init__(self, examples):
        # One pass: every example in one ragged batch. Counting first would run the whole
        # pipeline (tokenisation included) twice.
        try:
            self.rows = examples.ragged_batch(_LARGER_THAN_ANY_DATASET).get_single_element()
        except tf.errors.InvalidArgumentError:  # "Dataset was empty", or a pipeline error
            if int(examples.take(1).reduce(0, lambda count, _: count + 1)):
                raise
            self.rows = None
        self.size = int(tf.nest.flatten(self.rows)[0].shape[0]) if self.rows is not None else 0

    def row(self, index):
        return tf.nest.map_structure(lambda rows: rows[index], self.rows)

    def in_order(self, order=None):
        """The examples as a dataset, in `order` (a function of the position) or as stored."""
        positions = tf.data.Dataset.range(self.size)
        if order is not None:
            positions = positions.map(order)
        return positions.map(self.row, num_parallel_calls=tf.data.AUTOTUNE)


def epoch_ordered_batches(table, make_batches, seed, epochs, skip_batches=0):
    """Epochs `epochs[0]` .. `epochs[1] - 1` of batches, one after the other.

    Args:
        table: an `ExampleTable`.
        make_batches: dataset -> batched dataset (e.g. `bucket_by_length`);
            it must keep every example and be deterministic.
        seed: the run's seed (an integer >= 0).
        epochs: `(first, stop)` epoch indices.
        skip_batches: batches of the first epoch already trained.
    """
    first, stop = epochs
    last = tf.constant(max(table.size - 1, 0), tf.int64)

    def one_epoch(epoch):
        key = tf.stack([tf.constant(seed, tf.int64), epoch])
        shuffle = lambda i: tf.random.experimental.index_shuffle(i, key, last)
        return make_batches(table.in_order(shuffle))

    stream = tf.data.Dataset.range(first, stop).flat_map(one_epoch)
    return stream.skip(skip_batches).prefetch(tf.data.AUTOTUNE)


def count_batches(table, make_batches):
    """Batches in one epoch (the same for every epoch; see the module docstring)."""
    if not table.size:
        return 0
    return int(make_batches(table.in_order()).reduce(tf.constant(0, tf.int64),
                                                     lambda count, _: count + 1))
