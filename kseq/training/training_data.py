"""The data a run trains on: prepared once, tokenised once, streamed every epoch.

One path for every size and every source:

1. **Preparation** (`prepared_corpus`): the rows of the `--data` files (a file,
   several, a glob or a folder; plain or gzip; TSV or CSV) or of the recipe's
   data builder are read one at a time, checked by the task (naming file and
   line), split by a hash of the input (2% test, 2% validation), and written as
   record shards with a seeded sample of at most `training.vocabulary_sample`
   (1,000,000) training examples for the vocabulary. It lives in
   `$KSEQ_HOME/corpora/<key>`, keyed by the files' SHA-256, the columns, the
   sample's size and seed: a second run on the same data reads it.
2. **Tokenisation** (`TrainingData`): the model's preprocessor tokenises the
   training split once into a `TokenStore` beside it (keyed by the
   preprocessor and the model section), so later epochs, resumed runs and
   other runs read token shards.
3. **Epochs** (`TrainingData.stream`): epoch `e` reads the store in its own
   order (`TokenStore.epoch`), filters by length and buckets; a resumed run
   skips the batches it trained. Every epoch has the same number of batches
   (counted once, kept in the store), so step `s` is batch `s % n` of epoch
   `s // n`.

Validation and returned splits hold at most `HELD_OUT_ROWS` rows each in memory.
"""

import contextlib
import hashlib
import json
import logging
import os

from kseq.data.corpus.corpus_files import corpus_files, describe_files, fingerprint
from kseq.data.corpus.corpus_parts import prepare_corpus_in_parts
from kseq.data.corpus.corpus_preparation import (SAMPLE_SIZE, CorpusRow, is_prepared,
                                                  prepare_corpus)
from kseq.data.corpus.held_out_split import SHARES, split_of
from kseq.data.corpus.prepared_corpus import PreparedCorpus
from kseq.data.corpus.token_store import CHUNK, WINDOW, TokenStore
from kseq.data.pipeline.bucketing import (bucket_by_length, count_bucketed_batches,
                                          count_bucketed_chunks, example_length,
                                          filter_by_length)
from kseq.data.pipeline.parallel_text import iter_table_rows
from kseq.data.sources.kseq_home import kseq_home
from kseq.errors import KseqError

HELD_OUT_ROWS = 10_000  # validation / test rows a run keeps in memory
FEW_HELD_OUT = 50  # fewer validation or test examples give scores too noisy to read
# First-row values that name columns rather than hold data: a header read as an example.
COLUMN_NAMES = {"text", "label", "labels", "source", "target", "input", "output", "sentence",
                "src", "tgt", "english", "french", "german", "spanish", "category", "class",
                "tag", "tags", "words", "image", "images", "caption", "id", "message", "review",
                "sentiment", "translation", "question", "answer", "path", "file", "filename",
                "en", "fr", "de", "es"}
CHECKED_ROWS = 10_000  # rows a task checks at a time
# Files of at least this many bytes in all are prepared in one process a core.
PARALLEL_BYTES = 64 << 20
CORPUS_FORMAT = "kseq-corpus-2"  # 2: warnings kept in the manifest


def file_source(spec, columns=None):
    """The data source of `--data spec`: its files, their fingerprint and `columns`."""
    files = corpus_files(spec)
    path = os.path.abspath(spec) if isinstance(spec, (str, os.PathLike)) else \
        [os.path.abspath(item) for item in spec]
    return {"kind": "file", "path": path, "files": files, "sha256": fingerprint(files),
            "columns": None if columns is None else list(columns)}


def prepared_corpus(recipe, source, report=None):
    """The prepared corpus of `source` (a file source or the recipe's builder), made now
    when the cache does not hold it."""
    from kseq import zoo

    training = recipe.get("training", {})
    sample = int(training.get("vocabulary_sample", SAMPLE_SIZE))
    seed = int(training.get("seed", 0))
    task = zoo.TASKS.get(recipe.get("task", "translator"))
    labels = bool(getattr(task, "targets_are_labels", False))
    splits, skipped = None, {}
    if source["kind"] == "builder":
        splits = zoo.build_data(recipe)
        inputs = "bytes" if zoo.takes_images(recipe) else "text"
        key = _key({"builder": _pairs_digest(splits), "sample": sample, "seed": seed})
        rows = _builder_rows(splits)
    else:
        images = zoo.takes_images(recipe)
        inputs = "paths" if images else "text"
        model = recipe.get("model") or {}
        key = _key({"sha256": source["sha256"], "columns": source.get("columns"),
                    # what the task's row checks read: rows passed for one recipe may not
                    # pass for another
                    "checked_by": [recipe.get("task", "translator"), model.get("label_names"),
                                   model.get("tag_names")],
                    "valid": (source.get("valid") or {}).get("sha256"),
                    "sample": sample, "seed": seed, "images": images,
                    # image paths are relative to their file's folder
                    "folders": sorted({os.path.dirname(p) for p in _all_files(source)})
                    if images else None})
        rows = _file_rows(source, recipe, task, images, skipped)
    folder = os.path.join(kseq_home(), "corpora", key)
    if not is_prepared(folder):
        warnings = []
        jobs = preparation_jobs(source, recipe) if source["kind"] == "file" and \
            not images else None
        with _kept_warnings(warnings):
            facts = {"sample_size": sample, "seed": seed, "inputs": inputs, "labels": labels,
                     "report": report,
                     "extra": {"skipped": skipped, "key": key, "warnings": warnings}}
            if jobs:
                prepare_corpus_in_parts(read_job_rows, jobs, folder, **facts)
            else:
                prepare_corpus(rows, folder, **facts)
    else:  # what the preparation said about the data, said again
        for line in PreparedCorpus(folder).manifest.get("warnings", []):
            logging.getLogger("kseq").warning("%s", line)
    corpus = PreparedCorpus(folder)
    corpus.builder_splits = splits if source["kind"] == "builder" else None
    corpus.description = describe_files(source["files"]) if source["kind"] == "file" else \
        "the recipe's data builder"
    if not sum(corpus.size(split) for split in ("train", "valid", "test")):
        raise KseqError(f"No usable rows (an input and a target each) in the data. "
                        f"Received: {corpus.description}")
    return corpus


@contextlib.contextmanager
def _kept_warnings(lines):
    """Appends the kseq warnings logged inside the block to `lines` (a prepared corpus
    repeats them to every later run that reads it), also under `--quiet` (the logger at
    ERROR), where they are kept but still not printed."""
    logger = logging.getLogger("kseq")
    threshold = logger.getEffectiveLevel()
    quiet = threshold > logging.WARNING

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
            if quiet and record.levelno >= threshold:  # what --quiet still prints
                logging.getLogger().handle(record)

    handler = Keep(logging.WARNING)
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    if quiet:  # let warnings reach `handler` only
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])  # (setLevel, not `.level =`: it clears the level caches)
        logger.propagate = saved[1]


def _key(facts):
    return hashlib.sha256(json.dumps({"format": CORPUS_FORMAT, **facts},
                                     sort_keys=True).encode()).hexdigest()[:32]


def _pairs_digest(splits):
    digest = hashlib.sha256()
    for name in ("train", "valid", "test"):
        for source, target in splits.get(name, []):
            for value in (name, source, target):
                data = value if isinstance(value, bytes) else str(value).encode("utf-8")
                digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _builder_rows(splits):
    for name in ("train", "valid", "test"):
        for line, (source, target) in enumerate(splits.get(name, []), start=1):
            yield CorpusRow(f"{name} split", line, source, target, name)


def _all_files(source):
    return source["files"] + ((source.get("valid") or {}).get("files") or [])


def _file_rows(source, recipe, task, images, totals):
    """Each file's usable rows, checked by the task `CHECKED_ROWS` at a time; skipped
    rows are added up in `totals`. With validation files (`source["valid"]`), their rows
    are the validation split and the data files' hash split holds out only a test share."""
    for path, split in _file_splits(source):
        yield from _one_file_rows(path, split, source.get("columns"), recipe, task, images,
                                  totals)


def _file_splits(source):
    """`(path, split rule)` of every file: "valid", "by hash without validation" (when
    validation files are given) or None (the hash split)."""
    valid_files = set((source.get("valid") or {}).get("files") or [])
    return [(path, "valid" if path in valid_files and path not in source["files"] else
             ("by hash without validation" if valid_files else None))
            for path in _all_files(source)]


def _one_file_rows(path, split, columns, recipe, task, images, totals):
    skipped = {"empty": 0, "ragged": 0, "not_utf8": 0}
    chunk = []
    read = task.table_rows if task is not None else iter_table_rows
    for row in read(path, columns, skipped=skipped):
        if not chunk and row[0] == 1 and columns is None:
            _check_not_a_header(path, row)
        chunk.append(row)
        if len(chunk) == CHECKED_ROWS:
            yield from _checked(chunk, path, recipe, task, images, split)
            chunk = []
    yield from _checked(chunk, path, recipe, task, images, split)
    for kind, count in skipped.items():
        totals[kind] = totals.get(kind, 0) + count
    if any(skipped.values()):
        hint = " (a file of more than two columns needs a header row and --columns " \
               "INPUT,TARGET)" if skipped["ragged"] else ""
        logging.getLogger("kseq").warning(
            "%s: skipped %s%s", path,
            ", ".join(f"{count:,} {_SKIPPED[kind]}" for kind, count in skipped.items()
                      if count), hint)


def preparation_jobs(source, recipe, processes=None):
    """The files of a file source in contiguous groups of about equal size, one a
    process, when preparing them side by side pays (several files, at least
    `PARALLEL_BYTES` in all, and several cores; `KSEQ_PREPARATION_PROCESSES` sets the
    number of processes); else None (one pass in this process)."""
    splits = _file_splits(source)
    sizes = [max(1, os.path.getsize(path)) for path, _ in splits]
    if processes is None:
        processes = int(os.environ.get("KSEQ_PREPARATION_PROCESSES", 0)) or None
        if processes is None:
            processes = _cores() if sum(sizes) >= PARALLEL_BYTES else 1
    processes = min(processes, len(splits))
    if processes < 2:
        return None
    groups, share, done = [[]], sum(sizes) / processes, 0
    for (path, split), size in zip(splits, sizes):
        if groups[-1] and done >= share * len(groups) and len(groups) < processes:
            groups.append([])
        groups[-1].append((path, split))
        done += size
    return [{"files": group, "columns": source.get("columns"), "recipe": recipe,
             "task": recipe.get("task", "translator")} for group in groups]


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def read_job_rows(job, skipped):
    """A preparation job's rows (`preparation_jobs`), in a worker process."""
    from kseq import zoo

    task = zoo.TASKS.get(job["task"])
    for path, split in job["files"]:
        yield from _one_file_rows(path, split, job["columns"], job["recipe"], task, False,
                                  skipped)


_SKIPPED = {"empty": "line(s) with an empty input or target",
            "ragged": "line(s) without exactly one tab (two columns)",
            "not_utf8": "line(s) that are not UTF-8"}


def _check_not_a_header(path, row):
    """A header-less file's first row whose input and target both name columns is a header
    row read as an example (it would train a class called "label")."""
    _, source, target = row
    if source.strip().lower() in COLUMN_NAMES and target.strip().lower() in COLUMN_NAMES:
        raise KseqError(f"{path} line 1 looks like a header ({source!r}, {target!r}), not an "
                        f"example; name the columns to read it as one: --columns "
                        f"{source},{target}. Received: --data {path}")


def held_out_warning(corpus):
    """A line for validation or test splits too small to score, or None."""
    small = [f"{corpus.size(split)} {name}" for split, name in
             (("valid", "validation"), ("test", "test")) if corpus.size(split) < FEW_HELD_OUT]
    if not small:
        return None
    return (f"only {' and '.join(small)} examples (2% each of the data, by a hash of the "
            f"input): their scores are noisy; give more with --valid FILE")


def _checked(rows, path, recipe, task, images, split=None):
    """`CorpusRow`s of checked `(line, input, target)` rows; the split by a hash of the
    input column as written (an image's path relative to its file: the same split
    wherever the corpus lies), unless `split` names one."""
    if not rows:
        return
    if task is not None:
        task.check_training_rows(recipe, rows, path)
    folder = os.path.dirname(path)
    for line, source, target in rows:
        row_split = split
        if split is None or split == "by hash without validation":
            key = task.held_out_key(source, target) if task is not None else source
            row_split = split_of(key, valid_percent=0 if split else SHARES["valid"])
        if images:
            source = source if os.path.isabs(source) else os.path.join(folder, source)
            if not os.path.isfile(source):
                raise KseqError(f"{path} line {line}: no such image file. Received: {source}")
        yield CorpusRow(path, line, source, target, row_split)


def _replaces_examples(model):
    """Whether the task replaces tokenised examples before training (`training_examples`)."""
    from kseq.models.task import Task

    return type(model).training_examples is not Task.training_examples


class TrainingData:
    """A model's view of a prepared corpus: its token store, batches and epochs.

    Args:
        corpus: a `PreparedCorpus`.
        model: the task model (its preprocessor tokenises; `training_examples`).
        recipe: the run's recipe (`training.boundaries`, `batch_size` /
            `token_budget`, `shuffle_window`; the model section keys the store).
    """

    def __init__(self, corpus, model, recipe):
        self.corpus, self.model = corpus, model
        training = recipe.get("training", {})
        self.boundaries = training.get("boundaries", [16, 32, 48, 64])
        self.batch_size, self.token_budget = training.get("batch_size"), \
            training.get("token_budget")
        self.window = int(training.get("shuffle_window", WINDOW))
        self.store = self._token_store(recipe)

    def _token_store(self, recipe):
        preprocessor = self.model.preprocessor
        key = hashlib.sha256(json.dumps(
            {"task": type(self.model).__name__, "preprocessor": preprocessor.get_config(),
             "model": recipe.get("model")}, sort_keys=True, default=str).encode()).hexdigest()
        folder = os.path.join(self.corpus.folder, f"tokens-{key[:24]}")
        if TokenStore.is_built(folder):
            return TokenStore(folder)
        if self.corpus.inputs != "text":  # a file that does not decode: named now
            for chunk in self.corpus.chunks("train", 256):
                preprocessor.check_training_images([image for image, _ in chunk])
        if _replaces_examples(self.model) or self.corpus.inputs == "paths":
            # per example: images read from their files, a captioner's cached features
            examples = preprocessor.tokenized(self.corpus.dataset("train"))
            chunks = self.model.training_examples(examples).ragged_batch(CHUNK)
        else:
            chunks = preprocessor.tokenize_batches(self.corpus.batches("train", CHUNK))
        return TokenStore.build(folder, chunks, expected=self.corpus.size("train"))

    @property
    def length_filter(self):
        return filter_by_length(max(self.boundaries), self.model.preprocessor.example_length)

    def batcher(self):
        preprocessor = self.model.preprocessor
        return bucket_by_length(self.boundaries, self.batch_size, self.token_budget,
                                preprocessor.example_length, preprocessor.padded_widths(),
                                preprocessor.label_padding)

    def steps_per_epoch(self):
        """Batches in every epoch (counted on the first call, then kept in the store)."""
        key = json.dumps({"boundaries": sorted(self.boundaries), "batch_size": self.batch_size,
                          "token_budget": self.token_budget})
        return self.store.memo(key, self._count_batches)

    def _count_batches(self):
        if self.model.preprocessor.example_length is example_length:  # a chunk at a time
            return count_bucketed_chunks(self.store.chunks(), self.boundaries, self.batch_size,
                                         self.token_budget)
        return count_bucketed_batches(self.store.examples().apply(self.length_filter),
                                      self.boundaries, self.batch_size, self.token_budget,
                                      self.model.preprocessor.example_length)

    def stream(self, seed, epochs, skip_batches=0):
        """Epochs `epochs[0]` .. `epochs[1] - 1` of batches, after `skip_batches`; each
        epoch is built when the stream reaches it."""
        import tensorflow as tf

        first, stop = epochs
        batcher = self.batcher()

        def one_epoch(epoch):
            examples = self.store.epoch(seed, epoch, self.window).apply(self.length_filter)
            return examples.apply(batcher)

        stream = tf.data.Dataset.range(first, stop).flat_map(one_epoch)
        return stream.skip(skip_batches).prefetch(tf.data.AUTOTUNE)

    def held_out(self, split, limit=HELD_OUT_ROWS):
        """At most `limit` rows of "valid" or "test" as Python pairs."""
        return self.corpus.pairs(split, limit)
