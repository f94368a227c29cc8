"""`ExampleTable`: every example in one pass, the empty set, and pipeline errors kept."""

import pytest
import tensorflow as tf

from kseq.data.pipeline.epoch_order import ExampleTable, count_batches, epoch_ordered_batches


def words(count):
    texts = [" ".join(["w"] * (i % 5 + 1)) for i in range(count)]
    return tf.data.Dataset.from_tensor_slices(texts).map(
        lambda text: {"tokens": tf.strings.split(text), "length": tf.strings.length(text)})


def test_the_table_holds_every_ragged_example_once_in_order():
    table = ExampleTable(words(12).filter(lambda row: row["length"] > 1))  # unknown size
    assert table.size == 9
    lengths = [len(table.row(i)["tokens"]) for i in range(table.size)]
    assert lengths == [2, 3, 4, 5, 2, 3, 4, 5, 2]
    ordered = [int(row["length"]) for row in table.in_order()]
    assert ordered == [int(table.row(i)["length"]) for i in range(9)]


def test_an_empty_set_is_an_empty_table():
    table = ExampleTable(words(4).filter(lambda row: row["length"] < 0))
    assert table.size == 0 and table.rows is None
    assert count_batches(table, lambda dataset: dataset.batch(2)) == 0


def test_a_failing_pipeline_raises_instead_of_looking_empty():
    broken = tf.data.Dataset.range(3).map(lambda x: tf.math.floordiv(tf.constant(1, tf.int64), x))
    with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
        ExampleTable(broken)


def test_each_epoch_is_a_permutation_and_resuming_skips_exactly():
    table = ExampleTable(tf.data.Dataset.range(7))
    batch = lambda dataset: dataset.batch(3)  # noqa: E731
    assert count_batches(table, batch) == 3
    full = [b.numpy().tolist() for b in epoch_ordered_batches(table, batch, 5, (0, 2))]
    assert sorted(sum(full[:3], [])) == sorted(sum(full[3:], [])) == list(range(7))
    assert full[:3] != full[3:]  # another order in the next epoch
    resumed = epoch_ordered_batches(table, batch, 5, (1, 2), skip_batches=2)
    assert [b.numpy().tolist() for b in resumed] == full[5:]
