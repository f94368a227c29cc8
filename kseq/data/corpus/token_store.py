"""Training examples tokenised once into shards on disk, read in a new order every epoch.

`TokenStore.build(folder, examples)` runs the tokenising pipeline once and
writes its examples with `tf.data.Dataset.save` (TensorFlow's own snapshot
format) into `shards` shards, each example with its position in the corpus
(`example_id`). Later epochs, resumed runs and other runs on the same data
read the shards instead of tokenising again.

**Order.** Epoch `e` of a run with seed `s` reads the shards in a permuted
order, interleaves a few of them, and shuffles the examples in a window of
`window` examples; the permutation and the window's seed are functions of
`(s, e)` only, and every step is deterministic, so the same epoch gives the
same examples in the same order in any process. A resumed run rebuilds its
epoch and skips the batches already trained (reading, not training, them).
Memory is the window, whatever the corpus's size.

Example:
>>> import tempfile, os, tensorflow as tf
>>> examples = tf.data.Dataset.range(10).map(lambda n: ({"ids": tf.fill([n % 3 + 1], n)}, n))
>>> store = TokenStore.build(os.path.join(tempfile.mkdtemp(), "tokens"), examples, shards=2)
>>> store.size
10
>>> first = [int(y) for _, y in store.epoch(seed=0, epoch=0, window=4)]
>>> sorted(first) == list(range(10)), first == [int(y) for _, y in store.epoch(0, 0, 4)]
(True, True)
>>> first != [int(y) for _, y in store.epoch(seed=0, epoch=1, window=4)]
True
"""

import json
import os
import shutil
import tempfile

import tensorflow as tf

from kseq.atomic_files import TEMPORARY_PREFIX
from kseq.data.sources.cache_folders import publish_directory
from kseq.errors import KseqError

EXAMPLES_PER_SHARD = 100_000
MAX_SHARDS = 256
INTERLEAVED = 4  # shards read at once in an epoch
WINDOW = 100_000  # examples shuffled at once (`training.shuffle_window`)


class TokenStore:
    """A folder of saved examples (`examples/`) and its facts (`store.json`)."""

    def __init__(self, folder):
        self.folder = folder
        try:
            with open(os.path.join(folder, "store.json"), encoding="utf-8") as handle:
                self.facts = json.load(handle)
        except (OSError, ValueError) as error:
            raise KseqError(f"The tokenised corpus is unreadable ({error}); delete {folder} to "
                            f"tokenise it again. Received: {folder}") from None
        self.size = int(self.facts["examples"])
        self.shards = int(self.facts["shards"])

    @staticmethod
    def is_built(folder):
        return os.path.isfile(os.path.join(folder, "store.json"))

    @classmethod
    def build(cls, folder, examples, shards=None, expected=None):
        """Saves `examples` (a finite dataset) into `folder`, published whole; an already
        built store there is kept. `shards`: default one per `EXAMPLES_PER_SHARD` of
        `expected` examples (a guess is fine), at most `MAX_SHARDS`."""
        if cls.is_built(folder):
            return cls(folder)
        if shards is None:
            shards = min(MAX_SHARDS, max(1, -(-int(expected or 0) // EXAMPLES_PER_SHARD)))
        parent = os.path.dirname(os.path.abspath(folder))
        os.makedirs(parent, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
        try:
            numbered = examples.enumerate()
            numbered.save(os.path.join(scratch, "examples"),
                          shard_func=lambda index, _: index % shards)
            size = _count(scratch, numbered.element_spec)  # reading shards: not tokenising
            with open(os.path.join(scratch, "store.json"), "w", encoding="utf-8") as handle:
                json.dump({"examples": size, "shards": shards}, handle)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        publish_directory(scratch, folder, cls.is_built)
        return cls(folder)

    def examples(self, with_ids=False):
        """Every example once, in storage order."""
        return self._loaded(lambda shards: shards.flat_map(lambda shard: shard), with_ids)

    def epoch(self, seed, epoch, window=WINDOW, with_ids=False):
        """Epoch `epoch`'s examples in its own reproducible order (see the module doc)."""
        epoch_seed = _epoch_seed(seed, epoch)

        def read(shards):
            shards = shards.shuffle(self.shards, seed=epoch_seed)
            return shards.interleave(lambda shard: shard, cycle_length=min(INTERLEAVED,
                                                                           self.shards),
                                     block_length=1)  # sequential: deterministic

        examples = self._loaded(read, with_ids=True)
        examples = examples.shuffle(max(1, min(window, self.size)), seed=epoch_seed + 1,
                                    reshuffle_each_iteration=False)
        return examples if with_ids else examples.map(lambda _, example: example)

    def memo(self, key, compute):
        """`compute()`'s JSON-able result, kept in the store's folder under `key`."""
        path = os.path.join(self.folder, "memo.json")
        memo = {}
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as handle:
                    memo = json.load(handle)
            except (OSError, ValueError):
                memo = {}
        if key not in memo:
            memo[key] = compute()
            from kseq.atomic_files import atomic_write_json

            atomic_write_json(path, memo)
        return memo[key]

    def _loaded(self, reader, with_ids):
        examples = tf.data.Dataset.load(os.path.join(self.folder, "examples"),
                                        reader_func=reader)
        return examples if with_ids else examples.map(lambda _, example: example)


def _epoch_seed(seed, epoch):
    """One int64 seed per (run seed, epoch)."""
    return (int(seed) * 1_000_003 + int(epoch) * 7_919 + 17) % (2**62)


def _count(folder, element_spec):
    loaded = tf.data.Dataset.load(os.path.join(folder, "examples"), element_spec)
    return int(loaded.reduce(tf.constant(0, tf.int64), lambda n, _: n + 1))
