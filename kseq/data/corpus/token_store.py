"""Training examples tokenised once into shards on disk, read in a new order every epoch.

`TokenStore.build(folder, chunks)` runs the tokenising pipeline once and writes
its output with `tf.data.Dataset.save` (TensorFlow's own snapshot format) into
`shards` shards. The store holds *chunks*: batches of up to `CHUNK` examples
(sequences as ragged rows), because tf.data's cost is per element, and a corpus
of millions of examples is written, counted and shuffled in thousands of
chunks. Example `i` of chunk `c` has the id `c * CHUNK + i` (its position in the
corpus). Later epochs, resumed runs and other runs on the same data read the
shards instead of tokenising again.

**Order.** Epoch `e` of a run with seed `s` reads the shards in a permuted
order, four at a time, shuffles their chunks in a window of `CHUNK_WINDOW`
chunks, unbatches `MIXED_CHUNKS` chunks at a time taking their examples in
turn, and shuffles those examples in a window of `window` examples. Every seed
is a function of `(s, e)` only and every step is deterministic, so the same
epoch gives the same examples in the same order in any process. A resumed run
rebuilds its epoch and skips the batches already trained (reading, not
training, them). Memory is the windows (chunks are compact: one tensor per
feature for 1,024 examples), whatever the corpus's size.

Example:
>>> import tempfile, os, tensorflow as tf
>>> examples = tf.data.Dataset.range(10).map(lambda n: ({"ids": tf.fill([n % 3 + 1], n)}, n))
>>> chunks = examples.ragged_batch(4)  # 3 chunks
>>> store = TokenStore.build(os.path.join(tempfile.mkdtemp(), "tokens"), chunks, shards=2,
...                          chunk=4)
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

FORMAT = 2  # of store.json and the shards; another format is tokenised again
CHUNK = 1024  # examples per stored element
EXAMPLES_PER_SHARD = 100_000
MAX_SHARDS = 256
INTERLEAVED = 4  # shards read at once in an epoch
CHUNK_WINDOW = 64  # chunks shuffled at once (compact: ~65k examples in 64 tensors each)
MIXED_CHUNKS = 16  # chunks unbatched at once, their examples taken in turn
WINDOW = 8192  # examples shuffled at once (`training.shuffle_window`)


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
        self.chunk = int(self.facts["chunk"])

    @staticmethod
    def is_built(folder):
        """Whether `folder` holds a whole store of this format (an older or torn one is
        replaced by `build`)."""
        try:
            with open(os.path.join(folder, "store.json"), encoding="utf-8") as handle:
                return json.load(handle).get("format") == FORMAT
        except (OSError, ValueError, AttributeError):
            return False

    @classmethod
    def build(cls, folder, chunks, shards=None, expected=None, chunk=CHUNK):
        """Saves `chunks` (a finite dataset of batches of at most `chunk` examples, all
        but the last exactly `chunk`: ids count on that) into `folder`, published whole;
        an already built store there is kept. `shards`: default one per
        `EXAMPLES_PER_SHARD` of `expected` examples (a guess is fine), at most
        `MAX_SHARDS`."""
        if cls.is_built(folder):
            return cls(folder)
        if shards is None:
            shards = -(-int(expected or 0) // EXAMPLES_PER_SHARD)
            shards = min(MAX_SHARDS, max(1, shards))
        parent = os.path.dirname(os.path.abspath(folder))
        os.makedirs(parent, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
        try:
            numbered = chunks.enumerate()
            numbered.save(os.path.join(scratch, "examples"),
                          shard_func=lambda index, _: index % shards)
            size = _count(scratch)  # reading chunks: not tokenising again
            with open(os.path.join(scratch, "store.json"), "w", encoding="utf-8") as handle:
                json.dump({"format": FORMAT, "examples": size, "shards": shards,
                           "chunk": chunk}, handle)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        publish_directory(scratch, folder, cls.is_built)
        return cls(folder)

    def chunks(self):
        """Every chunk once, in storage order: `(features, labels)` batches."""
        return self._loaded(lambda shards: shards.flat_map(lambda shard: shard)).map(
            lambda _, chunk: chunk)

    def examples(self, with_ids=False):
        """Every example once, in storage order."""
        return _examples(self._loaded(lambda shards: shards.flat_map(lambda shard: shard)),
                         self.chunk, with_ids)

    def epoch(self, seed, epoch, window=WINDOW, with_ids=False):
        """Epoch `epoch`'s examples in its own reproducible order (see the module doc).
        `epoch` may be a tensor (`Dataset.range(...).flat_map`: epochs made lazily)."""
        epoch_seed = _epoch_seed(seed, epoch)

        def read(shards):
            shards = shards.shuffle(self.shards, seed=epoch_seed)
            return shards.interleave(lambda shard: shard, cycle_length=min(INTERLEAVED,
                                                                           self.shards),
                                     block_length=1)  # sequential: deterministic

        chunks = self._loaded(read).shuffle(CHUNK_WINDOW, seed=epoch_seed + 1,
                                            reshuffle_each_iteration=False)
        examples = _examples(chunks, self.chunk, with_ids=True, mixed=MIXED_CHUNKS)
        examples = examples.shuffle(window, seed=epoch_seed + 2, reshuffle_each_iteration=False)
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

    def _loaded(self, reader):
        return tf.data.Dataset.load(os.path.join(self.folder, "examples"), reader_func=reader)


def _epoch_seed(seed, epoch):
    """One int64 seed per (run seed, epoch); `epoch` an int or an int64 tensor."""
    if isinstance(epoch, int):
        return (int(seed) * 1_000_003 + epoch * 7_919 + 17) % (2**62)
    return tf.constant(int(seed) * 1_000_003 + 17, tf.int64) + tf.cast(epoch, tf.int64) * 7_919


def _rows(chunk):
    """The number of examples in a chunk `(features, labels)`."""
    first = tf.nest.flatten(chunk, expand_composites=False)[0]
    return first.nrows() if isinstance(first, tf.RaggedTensor) else tf.shape(first)[0]


def _examples(numbered_chunks, chunk_size, with_ids, mixed=1):
    """`(chunk index, chunk)` elements -> single examples, dense, with their ids if asked;
    `mixed` chunks are unbatched at once, their examples taken in turn."""
    def split(index, chunk):
        count = tf.cast(_rows(chunk), tf.int64)
        ids = index * chunk_size + tf.range(count, dtype=tf.int64)
        return tf.data.Dataset.from_tensor_slices((ids, chunk))

    examples = numbered_chunks.interleave(split, cycle_length=mixed, block_length=1).map(
        lambda i, example: (i, tf.nest.map_structure(_as_dense, example)))
    return examples if with_ids else examples.map(lambda _, example: example)


def _as_dense(x):
    return x.to_tensor() if isinstance(x, tf.RaggedTensor) else x


def _count(folder):
    loaded = tf.data.Dataset.load(os.path.join(folder, "examples"))
    return int(loaded.reduce(tf.constant(0, tf.int64),
                             lambda n, element: n + tf.cast(_rows(element[1]), tf.int64)))
