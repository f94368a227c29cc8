"""A prepared corpus (`corpus_preparation`) read back: as `tf.data`, or as bounded lists.

Example:
>>> import tempfile, os
>>> from kseq.data.corpus.corpus_preparation import CorpusRow, prepare_corpus
>>> rows = (CorpusRow("mem", n, f"{n} apples", f"{n} pommes") for n in range(300))
>>> folder = os.path.join(tempfile.mkdtemp(), "corpus")
>>> _ = prepare_corpus(rows, folder, sample_size=50, report=lambda line: None)
>>> corpus = PreparedCorpus(folder)
>>> corpus.size("valid"), corpus.pairs("valid", limit=2)
(3, [('17 apples', '17 pommes'), ('126 apples', '126 pommes')])
>>> [(s.decode(), t.decode()) for s, t in corpus.dataset("test").take(1).as_numpy_iterator()]
[('34 apples', '34 pommes')]
"""

import os

import tensorflow as tf

from kseq.data.corpus.corpus_preparation import read_manifest

READ_BUFFER = 1 << 20  # bytes read ahead per shard file


class PreparedCorpus:
    """The splits, sample and facts of one prepared corpus folder."""

    def __init__(self, folder):
        self.folder = folder
        self.manifest = read_manifest(folder)

    @property
    def inputs(self):
        """"text", "bytes" (encoded images) or "paths" (image files)."""
        return self.manifest["inputs"]

    @property
    def labels(self):
        """`{label: training count}` when targets are labels, else None."""
        return self.manifest.get("labels")

    def size(self, split):
        return int(self.manifest["counts"][split])

    def files(self, split):
        return [os.path.join(self.folder, name) for name in self.manifest["shards"][split]]

    def dataset(self, split):
        """`(input, target)` string pairs of `split`, in file order; image paths are read
        into their bytes."""
        pairs = self.batches(split, 1024).unbatch()
        if self.inputs == "paths":
            pairs = pairs.map(lambda path, target: (tf.io.read_file(path), target),
                              num_parallel_calls=tf.data.AUTOTUNE)
        return pairs

    def batches(self, split, size):
        """`(inputs [n], targets [n])` string batches of `split`, `size` pairs each (the last
        may be shorter), in file order; image paths stay paths. A record a pair side: read
        in batches, as tf.data's cost is per element."""
        records = tf.data.TFRecordDataset(self.files(split), buffer_size=READ_BUFFER)
        return records.batch(2 * size).map(lambda r: (r[0::2], r[1::2]),
                                           num_parallel_calls=tf.data.AUTOTUNE)

    def pairs(self, split, limit=None):
        """The first `limit` pairs of `split` (all: None) as Python values: text as str,
        images as bytes naming their file (`ImageFileBytes`)."""
        return self._read(self.files(split), limit)

    def sample(self):
        """The vocabulary sample: training pairs, as `pairs` gives them."""
        return self._read([os.path.join(self.folder, self.manifest["sample"]["file"])], None)

    def chunks(self, split, size=4096):
        """`split`'s pairs as `pairs` gives them, `size` at a time (lists)."""
        return self._chunks(self.files(split), None, size)

    def _read(self, files, limit):
        return [pair for chunk in self._chunks(files, limit, 4096) for pair in chunk]

    def _chunks(self, files, limit, size):
        if not files:
            return
        records = tf.data.TFRecordDataset(files, buffer_size=READ_BUFFER).batch(
            2, drop_remainder=True)
        if limit is not None:
            records = records.take(limit)
        for chunk in records.batch(size).as_numpy_iterator():  # [n, 2] bytes
            yield [(self._input(row[0]), row[1].decode("utf-8")) for row in chunk]

    def _input(self, value):
        if self.inputs == "text":
            return value.decode("utf-8")
        if self.inputs == "bytes":
            return value
        from kseq.data.pipeline.image_inputs import read_image_pairs

        path = value.decode("utf-8")
        return read_image_pairs([(path, "")], os.path.dirname(path))[0][0]
