"""`Preprocessor`: what every task's preprocessor shares (the protocol is in the package doc)."""

import tensorflow as tf

from kseq.data.bucketing import bucket_by_length, example_length, filter_by_length


class Preprocessor:
    """Base class: tokenised datasets and bucketed training batches from `__call__`.

    A subclass defines `__call__(x, y)` (batched, graph mode), `to_dataset(data)`
    (raw examples -> a `tf.data.Dataset` of `(x, y)`), `inference_inputs`,
    `input_signature`, and `get_config` / `from_config`. `example_length`
    (the length bucketing sorts by) defaults to the longest 1-D feature or label.
    """

    example_length = staticmethod(example_length)
    # What padded label positions hold (None: bucketing's default, 0 or -1 for class labels).
    label_padding = None

    def padded_widths(self):
        """Most columns each tensor of an example needs (a structure like the examples'),
        or None: bucketing then pads every sequence to its bucket's boundary."""
        return None

    def to_dataset(self, data):
        """Raw training examples as a dataset of `(x, y)`; a dataset passes through."""
        if isinstance(data, tf.data.Dataset):
            return data
        raise TypeError(f"{type(self).__name__} reads a tf.data.Dataset. "
                        f"Received: {type(data).__name__}")

    def tokenized(self, data, chunk=1024):
        """Raw examples (see `to_dataset`) -> unbatched, dense `(features, labels)` examples."""
        return (
            self.to_dataset(data)
            .batch(chunk)
            .map(self, num_parallel_calls=tf.data.AUTOTUNE)
            .unbatch()
            .map(_dense_example, num_parallel_calls=tf.data.AUTOTUNE)
        )

    def training_dataset(self, data, boundaries, batch_size=None, token_budget=None,
                         shuffle=True, seed=0, repeat=False):
        """Raw examples -> bucketed, padded, prefetched batches for `fit`."""
        dataset = self.tokenized(data)
        dataset = dataset.apply(filter_by_length(max(boundaries), self.example_length))
        if shuffle:
            dataset = dataset.shuffle(20000, seed=seed, reshuffle_each_iteration=True)
        if repeat:
            dataset = dataset.repeat()
        dataset = dataset.apply(bucket_by_length(boundaries, batch_size, token_budget,
                                                 self.example_length, self.padded_widths(),
                                                 self.label_padding))
        return dataset.prefetch(tf.data.AUTOTUNE)

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _as_dense(x):
    return x.to_tensor() if isinstance(x, tf.RaggedTensor) else x


def _dense_example(features, labels):
    """Unbatched ragged rows come out with a ragged spec; `padded_batch` needs dense ones."""
    return tf.nest.map_structure(_as_dense, features), _as_dense(labels)
