"""`Preprocessor`: what every task's preprocessor shares (the protocol is in the package doc)."""

import functools
import os

import tensorflow as tf

from kseq.data.pipeline.bucketing import (bucket_by_length, count_bucketed_batches, example_length,
                                          filter_by_length)


# Inference inputs are padded to a multiple of this, so a search or a model compiles for
# few widths.
LENGTH_STEP = 8
# `training_dataset`'s boundaries and batch size when neither the call nor the recipe sets
# them (`kseq train`'s default boundaries).
DEFAULT_BOUNDARIES = (16, 32, 48, 64)
DEFAULT_BATCH_SIZE = 32


def padded_ids(ragged, max_length):
    """Ragged ids `[B, (L)]` -> `(ids [B, W] int32, empty [B] bool)`.

    `W` is the longest row rounded up to a multiple of `LENGTH_STEP` (at least
    that, at most `max_length`); a row without ids is `empty`.
    """
    lengths = ragged.row_lengths()
    longest = tf.maximum(tf.reduce_max(tf.concat([lengths, [1]], 0)), 1)
    rounded = (longest + LENGTH_STEP - 1) // LENGTH_STEP * LENGTH_STEP
    width = tf.minimum(tf.cast(max_length, tf.int64), rounded)
    ids = ragged.to_tensor(shape=tf.stack([ragged.nrows(), width]))
    return tf.cast(ids, tf.int32), tf.equal(lengths, 0)


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
    # Whether `training_dataset` keeps tokenised examples in memory between epochs.
    cache_examples = True

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
            self.tokenized_batches(data, chunk)
            .unbatch()
            .map(_dense_example, num_parallel_calls=tf.data.AUTOTUNE)
        )

    def tokenized_batches(self, data, chunk=1024):
        """Raw examples -> batches of `chunk` tokenised examples (sequences as ragged rows):
        what a `kseq.data.corpus.TokenStore` keeps, without tf.data's per-example cost."""
        return self.tokenize_batches(self.to_dataset(data).batch(chunk))

    def tokenize_batches(self, batches):
        """A dataset of raw `(inputs [n], targets [n])` batches -> tokenised batches."""
        # autograph on, as `dataset.map` would use for `self`
        return batches.map(self.traced("__call__", autograph=True),
                           num_parallel_calls=tf.data.AUTOTUNE)

    def traced(self, method, autograph=False):
        """The method named `method` as one `tf.function` per preprocessor, made on first use.

        tf.data traces a map's function again for every dataset it builds, and
        every new search setting or export traces its text handling again; the
        tokenisation inside costs about a second to trace. Graphs that call
        the method through this function share one trace per input structure.
        """
        cache = self.__dict__.setdefault("_traced", {})
        key = (method, autograph)
        if key not in cache:
            # A partial, not the bound method: TensorFlow counts traces per function code,
            # so every model's first trace (many models in one process) would read as one
            # function retracing and print its "excessive retracing" warning; a partial
            # is counted on its own.
            bound = functools.partial(getattr(self, method))
            cache[key] = tf.function(bound, autograph=autograph, reduce_retracing=True)
        return cache[key]

    # The recipe's `training` batching keys (`boundaries`, `batch_size`, `token_budget`),
    # set by `Task.compile_from_recipe`; None for a preprocessor of no compiled model.
    training_defaults = None

    def batching(self, boundaries=None, batch_size=None, token_budget=None):
        """`(boundaries, batch_size, token_budget)` with the defaults filled in.

        Unset boundaries are the recipe's (`training_defaults`), else 16, 32,
        48, 64 (`kseq train`'s) cut at and ending with the longest input the
        preprocessor makes (its `max_length`, `max_source_length`,
        `max_target_length`), so none is left out. Without `batch_size` and
        `token_budget`, the recipe's (one of them), else a batch size of 32.

        Example:
        >>> import kseq
        >>> tok = kseq.text.WordTokenizer.build_vocabulary(["great film"])
        >>> pre = kseq.models.ClassifierPreprocessor(tok, ["negative", "positive"], 40)
        >>> pre.batching()
        ([16, 32, 40], 32, None)
        >>> pre.training_defaults = {"boundaries": [8, 16], "token_budget": 256}
        >>> pre.batching(), pre.batching(batch_size=4)
        (([8, 16], None, 256), ([8, 16], 4, None))
        """
        defaults = self.training_defaults or {}
        if boundaries is None:
            boundaries = defaults.get("boundaries")
        if boundaries is None:
            longest = max([getattr(self, name) for name in (
                "max_length", "max_source_length", "max_target_length")
                if isinstance(getattr(self, name, None), int)] or [64])
            boundaries = [b for b in DEFAULT_BOUNDARIES if b < longest] + [longest]
        if batch_size is None and token_budget is None:
            batch_size, token_budget = defaults.get("batch_size"), defaults.get("token_budget")
            if batch_size is None and token_budget is None:
                batch_size = DEFAULT_BATCH_SIZE
        return list(boundaries), batch_size, token_budget

    def training_dataset(self, data, boundaries=None, batch_size=None, token_budget=None,
                         shuffle=True, seed=0, repeat=False, cache=None):
        """Raw examples -> bucketed, padded, prefetched batches for `fit`.

        `boundaries`, `batch_size` and `token_budget` default to the model's
        recipe (`batching`): `model.preprocessor.training_dataset(pairs)` makes
        the batches `kseq train` would.

        Examples of known number (a list, or a dataset of known cardinality
        such as `from_tensor_slices`'s) without `repeat` give a dataset that
        carries its number of batches (counted on a first pass over the
        examples; the same in every epoch, whatever the shuffle), so `fit`
        shows each epoch's length and does not end the first epoch with "Your
        input ran out of data". A dataset of unknown length (a generator, which
        need not give the same examples twice) is read once an epoch, as given.

        `cache` keeps the tokenised examples of known number in memory after
        the first pass, so later epochs only shuffle and batch them: each pass
        otherwise tokenises again, and starting the tokenizers' ops costs about
        0.2 s an epoch whatever the data's size. None: the preprocessor's
        `cache_examples` (True for text; False where examples are decoded
        images, which a real set does not hold in memory).

        `data` may also name files of any size (a path, a glob such as
        `"corpus/*.tsv.gz"` or a folder; TSV or CSV, plain or gzip): every row
        trains, prepared and tokenised once into shards on disk
        (`kseq.data.corpus.file_training_data`), in bounded memory.
        """
        boundaries, batch_size, token_budget = self.batching(boundaries, batch_size, token_budget)
        if isinstance(data, (str, os.PathLike)):
            from kseq.data.corpus.file_training_data import file_training_dataset

            return file_training_dataset(self, data, boundaries, batch_size, token_budget,
                                         shuffle=shuffle, seed=seed, repeat=repeat)
        examples = self.to_dataset(data)  # a list's checks run here, once
        dataset = self.tokenized(examples)
        dataset = dataset.apply(filter_by_length(max(boundaries), self.example_length))
        finite = int(examples.cardinality()) >= 0
        if finite and (self.cache_examples if cache is None else cache):
            dataset = dataset.cache()
        counted = not repeat and finite
        batches = count_bucketed_batches(dataset, boundaries, batch_size, token_budget,
                                         self.example_length) if counted else None
        if shuffle:
            dataset = dataset.shuffle(20000, seed=seed, reshuffle_each_iteration=True)
        if repeat:
            dataset = dataset.repeat()
        dataset = dataset.apply(bucket_by_length(boundaries, batch_size, token_budget,
                                                 self.example_length, self.padded_widths(),
                                                 self.label_padding))
        if batches:  # (an empty dataset stays of unknown length: Keras then says it is empty)
            dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
        return dataset.prefetch(tf.data.AUTOTUNE)

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _as_dense(x):
    return x.to_tensor() if isinstance(x, tf.RaggedTensor) else x


def _dense_example(features, labels):
    """Unbatched ragged rows come out with a ragged spec; `padded_batch` needs dense ones."""
    return tf.nest.map_structure(_as_dense, features), _as_dense(labels)
