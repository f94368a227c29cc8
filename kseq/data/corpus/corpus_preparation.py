"""One streamed pass over a corpus: held-out splits, a vocabulary sample, record shards.

`prepare_corpus(rows, folder, ...)` reads `CorpusRow`s one at a time (never a
list of the corpus), puts each in its split (`held_out_split.split_of`, unless
the row names one), keeps a seeded, bounded sample of the training rows for the
vocabulary (`Reservoir`, plus the first row of every target when targets are
labels, so no class is missing from a sample), and writes each split as
TFRecord shards of `RECORDS_PER_SHARD` examples (two records each: input, then
target; any bytes). The folder is filled under a temporary name and published
whole (`kseq.data.sources.cache_folders`), its `manifest.json` last: a killed
preparation leaves nothing that could be read as prepared.

A corpus of several large files is prepared in several processes and merged
(`corpus_parts.prepare_corpus_in_parts`); both write the folder through
`PreparedPart` and `finish_folder`.

Example:
>>> import tempfile, os
>>> rows = (CorpusRow("mem", n, f"{n} apples", f"{n} pommes") for n in range(300))
>>> folder = os.path.join(tempfile.mkdtemp(), "corpus")
>>> manifest = prepare_corpus(rows, folder, sample_size=50, seed=0, report=lambda line: None)
>>> manifest["counts"], len(manifest["shards"]["train"]), manifest["sample"]["size"]
({'train': 291, 'valid': 3, 'test': 6}, 1, 50)
"""

import collections
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time

import tensorflow as tf

from kseq.atomic_files import TEMPORARY_PREFIX
from kseq.data.corpus.held_out_split import split_of
from kseq.data.corpus.reservoir import Reservoir
from kseq.data.sources.cache_folders import publish_directory
from kseq.errors import KseqError

FORMAT = 1
RECORDS_PER_SHARD = 250_000
SAMPLE_SIZE = 1_000_000  # default vocabulary sample, in training examples
MAX_LABELS = 100_000  # distinct targets kept apart when targets are labels
SPLITS = ("train", "valid", "test")

# One row of a corpus: where it came from (file, 1-based line) for error messages, its
# input and target (str, or bytes for an image), and its split when the source fixes it.
CorpusRow = collections.namedtuple("CorpusRow", "source line input target split",
                                   defaults=(None,))


def prepare_corpus(rows, folder, *, sample_size=SAMPLE_SIZE, seed=0, inputs="text",
                   labels=False, report=None, extra=None):
    """Writes the prepared corpus of `rows` to `folder`; returns its manifest.

    Args:
        rows: an iterable of `CorpusRow`.
        folder: where the prepared corpus goes (published whole; if a complete one
            is already there, it is kept and its manifest returned).
        sample_size: training examples kept for the vocabulary.
        seed: the sample's seed.
        inputs: what the inputs are: "text", "bytes" (encoded images) or "paths"
            (image files, read when the stream needs them).
        labels: targets are class labels: their counts are kept, and every label's
            first row is in the sample.
        report: a function taking a progress line (default: stderr, every 2 s).
        extra: JSON-able facts recorded in the manifest (the source, the columns).
    """
    if is_prepared(folder):
        return read_manifest(folder)
    with scratch_beside(folder) as scratch:
        part = PreparedPart(scratch, sample_size, seed, labels)
        progress = _Progress(report)
        try:
            for row in rows:
                part.add(row)
                progress.update(part.writer, part.sample)
        finally:
            part.writer.close()
        finish_folder(scratch, part.summary(), inputs, extra)
        progress.finish(part.writer, part.sample)
    publish_directory(scratch, folder, is_prepared)
    return read_manifest(folder)


@contextlib.contextmanager
def scratch_beside(folder):
    """A temporary folder beside `folder`, removed if the block fails."""
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
    try:
        yield scratch
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def finish_folder(scratch, summary, inputs, extra):
    """Writes the sample, then the manifest (last: it marks the folder whole)."""
    kept = set(summary["items"]) if summary["firsts"] else set()
    firsts = [pair for pair in summary["firsts"].values() if pair not in kept]
    _write_sample(scratch, summary["items"] + firsts)
    targets = summary["targets"]
    manifest = {"format": FORMAT, "inputs": inputs, "counts": summary["counts"],
                "shards": summary["names"],
                "sample": {"file": "sample.tfrecord",
                           "size": len(summary["items"]) + len(firsts),
                           "seen": summary["seen"]},
                "labels": dict(targets) if targets is not None else None, **(extra or {})}
    with open(os.path.join(scratch, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1)


class PreparedPart:
    """What one pass gathers: its splits' shards, a training sample, label counts."""

    def __init__(self, folder, sample_size, seed, labels):
        self.writer = _ShardWriter(folder)
        self.sample = Reservoir(sample_size, seed)
        self.firsts = {}
        self.targets = collections.Counter() if labels else None

    def add(self, row):
        split = row.split or split_of(row.input)
        self.writer.write(split, row.input, row.target)
        if split == "train":
            self.sample.add((row.input, row.target))
            if self.targets is not None:
                _count_label(self.targets, self.firsts, row)

    def summary(self):
        return {"counts": dict(self.writer.counts), "names": self.writer.names,
                "items": self.sample.items, "seen": self.sample.seen,
                "firsts": self.firsts,
                "targets": dict(self.targets) if self.targets is not None else None}


def is_prepared(folder):
    """Whether `folder` holds a complete prepared corpus (its manifest is written last)."""
    return os.path.isfile(os.path.join(folder, "manifest.json"))


def read_manifest(folder):
    path = os.path.join(folder, "manifest.json")
    try:
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
        if manifest.get("format") != FORMAT:
            raise ValueError(f"format {manifest.get('format')!r}, expected {FORMAT}")
        return manifest
    except (OSError, ValueError) as error:
        raise KseqError(f"The prepared corpus is unreadable ({error}); delete {folder} to "
                        f"prepare it again. Received: {path}") from None


def _count_label(targets, firsts, row):
    targets[row.target] += 1
    if row.target not in firsts:
        if len(firsts) >= MAX_LABELS:
            raise KseqError(f"{row.source} line {row.line}: more than {MAX_LABELS:,} distinct "
                            f"labels; is the target column a text? Received: {row.target!r:.80}")
        firsts[row.target] = (row.input, row.target)


def _as_bytes(value):
    return value if isinstance(value, (bytes, bytearray)) else str(value).encode("utf-8")


def _write_sample(folder, pairs):
    with tf.io.TFRecordWriter(os.path.join(folder, "sample.tfrecord")) as writer:
        for source, target in pairs:
            writer.write(_as_bytes(source))
            writer.write(_as_bytes(target))


class _ShardWriter:
    """TFRecord shards per split, a new shard every `RECORDS_PER_SHARD` examples."""

    def __init__(self, folder):
        self.folder = folder
        self.counts = {split: 0 for split in SPLITS}
        self.names = {split: [] for split in SPLITS}
        self.writers = {}

    def write(self, split, source, target):
        count = self.counts[split]
        if count % RECORDS_PER_SHARD == 0:
            self._next_shard(split)
        writer = self.writers[split]
        writer.write(_as_bytes(source))
        writer.write(_as_bytes(target))
        self.counts[split] = count + 1

    def _next_shard(self, split):
        if split in self.writers:
            self.writers[split].close()
        name = f"{split}-{len(self.names[split]):05d}.tfrecord"
        self.names[split].append(name)
        self.writers[split] = tf.io.TFRecordWriter(os.path.join(self.folder, name))

    def close(self):
        for writer in self.writers.values():
            writer.close()
        self.writers = {}


class _Progress:
    """A progress line every 2 s on stderr (or to `report`) while preparing."""

    EVERY_S = 2.0

    def __init__(self, report):
        self.report = report or (lambda line: print(line, file=sys.stderr, flush=True))
        self.started = self.last = time.monotonic()
        self.rows = 0

    def update(self, writer, sample):
        self.rows += 1
        if self.rows % 4096:
            return
        now = time.monotonic()
        if now - self.last >= self.EVERY_S:
            self.last = now
            self.report(self._line(writer, sample, now))

    def report_count(self, rows, processes):
        """A line for a preparation in `processes` processes that has read `rows` rows."""
        now = time.monotonic()
        rate = rows / max(now - self.started, 1e-9)
        self.report(f"preparing: {rows:,} examples read ({rate:,.0f}/s) in {processes} "
                    f"processes")

    def finish(self, writer, sample):
        if time.monotonic() - self.started >= self.EVERY_S:
            self.report(self._line(writer, sample, time.monotonic()) + ", done")

    def _line(self, writer, sample, now):
        rate = self.rows / max(now - self.started, 1e-9)
        counts = writer.counts
        shards = sum(len(names) for names in writer.names.values())
        return (f"preparing: {self.rows:,} examples read ({rate:,.0f}/s): {counts['train']:,} "
                f"training, {counts['valid']:,} validation, {counts['test']:,} test; "
                f"vocabulary sample {len(sample.items):,}; {shards} shard(s)")
