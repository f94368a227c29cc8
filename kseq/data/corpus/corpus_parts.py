"""A corpus in several files prepared side by side: one process a group of files, merged.

The preparation pass (reading, checking, hashing, writing records) is Python on
one core; a corpus of several large files is prepared in `len(jobs)`
processes and the parts are merged into one prepared corpus that reads as
`corpus_preparation.prepare_corpus` would have written it:

- every row lands in the split its hash gives, so the splits and counts equal
  one pass's, and the shards keep the jobs' order (a job's files in order);
- the vocabulary sample is a uniform draw from the union of the parts'
  samples (`merge_samples`), the same for the same jobs and seed;
- a label's first row comes from the first job that has it;
- the first failing job's error is raised (its file and line), the warnings
  come back in the jobs' order, skipped lines are summed.

Workers are separate Python processes (`python -m kseq.data.corpus.corpus_parts
JOB RESULT`), not `multiprocessing` children: those would re-import the caller's
main script, and forking a process that runs TensorFlow's threads is unsafe.
A job and its result travel as pickle files in the scratch folder.

Example:
>>> merged = merge_samples([(list(range(10)), 10), (list(range(100, 110)), 10)], 4, 0)
>>> len(merged), merged == merge_samples([(list(range(10)), 10),
...                                       (list(range(100, 110)), 10)], 4, 0)
(4, True)
"""

import collections
import logging
import os
import pickle
import random
import shutil
import subprocess
import sys
import time

from kseq.data.corpus.corpus_preparation import (MAX_LABELS, SAMPLE_SIZE, SPLITS,
                                                  PreparedPart, finish_folder, is_prepared,
                                                  read_manifest, scratch_beside)
from kseq.data.sources.cache_folders import publish_directory
from kseq.errors import KseqError

POLL_S = 2.0  # between progress lines
PROGRESS_EVERY = 16_384  # rows between a worker's progress notes


def prepare_corpus_in_parts(read_rows, jobs, folder, *, sample_size=SAMPLE_SIZE, seed=0,
                            inputs="text", labels=False, report=None, extra=None):
    """`prepare_corpus` of the rows of `jobs`, one process a job.

    Args:
        read_rows: a module-level function `read_rows(job, skipped)` yielding a job's
            `CorpusRow`s and adding its skipped lines to the dict `skipped` (each
            process imports it by name).
        jobs: picklable job descriptions, in the corpus's order.
        folder, sample_size, seed, inputs, labels, extra: as `prepare_corpus`; the
            manifest's `skipped` is the jobs' skipped lines summed.
        report: a function taking a progress line (default: stderr, every 2 s).
    """
    if is_prepared(folder):
        return read_manifest(folder)
    report = report or (lambda line: print(line, file=sys.stderr, flush=True))
    with scratch_beside(folder) as scratch:
        parts = [os.path.join(scratch, f"part-{index}") for index in range(len(jobs))]
        children = [_start(read_rows, job, part, sample_size, f"{seed}-{index}", labels)
                    for index, (job, part) in enumerate(zip(jobs, parts))]
        try:
            _wait(children, parts, report)
        finally:
            for child in children:  # a failed job or Ctrl-C: the others stop too
                if child.poll() is None:
                    child.kill()
                    child.wait()
        summary = _merged(scratch, [_result(part, child) for part, child in
                                    zip(parts, children)], sample_size, seed)
        finish_folder(scratch, summary, inputs, {**(extra or {}), "skipped": summary["skipped"]})
    publish_directory(scratch, folder, is_prepared)
    return read_manifest(folder)


def merge_samples(parts, size, seed):
    """A uniform sample of at most `size` items of the union of streams, from each
    stream's uniform sample: `parts` is `(items, seen)` per stream. How many come from
    each stream is drawn as a draw without replacement from the union would fall (each
    stream's sample holds at least that many); which ones, uniformly among its sample."""
    rng = random.Random(f"merge-{seed}")
    left = [seen for _, seen in parts]
    taken = [0] * len(parts)
    for _ in range(min(size, sum(left))):
        pick = rng.randrange(sum(left))
        index = 0
        while pick >= left[index]:
            pick -= left[index]
            index += 1
        left[index] -= 1
        taken[index] += 1
    return [item for (items, _), count in zip(parts, taken) for item in rng.sample(items, count)]


def _start(read_rows, job, part, sample_size, seed, labels):
    os.makedirs(part)
    with open(os.path.join(part, "job.pickle"), "wb") as handle:
        pickle.dump({"read_rows": read_rows, "job": job, "sample_size": sample_size,
                     "seed": seed, "labels": labels}, handle)
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get(
        "TF_CPP_MIN_LOG_LEVEL", "2"))
    with open(os.path.join(part, "stderr"), "wb") as stderr:  # a file: a pipe could fill
        return subprocess.Popen([sys.executable, "-m", "kseq.data.corpus.corpus_parts", part],
                                env=environment, stdout=subprocess.DEVNULL, stderr=stderr)


def _wait(children, parts, report):
    """Until every child ends or one fails: a progress line every `POLL_S`."""
    started = last = time.monotonic()
    while any(child.poll() is None for child in children):
        if any(child.poll() not in (None, 0) for child in children):
            return
        time.sleep(0.2)
        now = time.monotonic()
        rows = sum(_rows_read(part) for part in parts)
        if now - last >= POLL_S and rows:  # (a process starts by importing TensorFlow)
            last = now
            report(f"preparing: {rows:,} examples read ({rows / (now - started):,.0f}/s) in "
                   f"{len(parts)} processes")


def _rows_read(part):
    try:
        with open(os.path.join(part, "progress"), encoding="utf-8") as handle:
            return int(handle.read() or 0)
    except (OSError, ValueError):
        return 0


def _result(part, child):
    """A finished child's summary; its error raised as it was (a KseqError), or one
    line with the end of its stderr."""
    child.wait()
    path = os.path.join(part, "result.pickle")
    if child.returncode == 0 and os.path.isfile(path):
        with open(path, "rb") as handle:
            result = pickle.load(handle)
        if isinstance(result, BaseException):
            raise result
        return result
    with open(os.path.join(part, "stderr"), "rb") as handle:
        stderr = handle.read().decode("utf-8", "replace").strip()
    if child.returncode is not None and child.returncode < 0 and not stderr:
        raise KeyboardInterrupt  # stopped by a signal with this process (Ctrl-C)
    raise KseqError(f"A corpus preparation process failed (exit {child.returncode}): "
                    f"{stderr.splitlines()[-1] if stderr else 'no message'}. "
                    f"Received: {part}")


def _merged(scratch, summaries, sample_size, seed):
    """One summary of the parts' summaries; their shards moved into `scratch` in order."""
    counts = {split: 0 for split in SPLITS}
    names = {split: [] for split in SPLITS}
    firsts, targets, skipped = {}, None, collections.Counter()
    for index, summary in enumerate(summaries):
        part = os.path.join(scratch, f"part-{index}")
        for split in SPLITS:
            counts[split] += summary["counts"][split]
            for name in summary["names"][split]:
                new = f"{split}-{len(names[split]):05d}.tfrecord"
                os.replace(os.path.join(part, name), os.path.join(scratch, new))
                names[split].append(new)
        shutil.rmtree(part)
        for label, pair in summary["firsts"].items():
            firsts.setdefault(label, pair)
        if summary["targets"] is not None:
            targets = (targets or collections.Counter()) + collections.Counter(
                summary["targets"])
        skipped.update(summary["skipped"])
        for line in summary["warnings"]:  # said again in this process, in the jobs' order
            logging.getLogger("kseq").warning("%s", line)
    if len(firsts) > MAX_LABELS:
        raise KseqError(f"More than {MAX_LABELS:,} distinct labels; is the target column a "
                        f"text? Received: {len(firsts):,} labels")
    items = merge_samples([(s["items"], s["seen"]) for s in summaries], sample_size, seed)
    return {"counts": counts, "names": names, "items": items, "firsts": firsts,
            "targets": targets, "seen": sum(s["seen"] for s in summaries),
            "skipped": dict(skipped)}


def _prepare_part(part):
    """In a worker process: the job in `part/job.pickle` prepared into `part`; its
    summary (or its KseqError) written to `part/result.pickle`."""
    with open(os.path.join(part, "job.pickle"), "rb") as handle:
        task = pickle.load(handle)
    warnings, skipped = [], {}

    class Keep(logging.Handler):
        def emit(self, record):
            warnings.append(record.getMessage())

    logging.getLogger("kseq").addHandler(Keep(logging.WARNING))
    prepared = PreparedPart(part, task["sample_size"], task["seed"], task["labels"])
    try:
        for count, row in enumerate(task["read_rows"](task["job"], skipped), start=1):
            prepared.add(row)
            if count % PROGRESS_EVERY == 0:
                _note_progress(part, count)
        result = {**prepared.summary(), "skipped": skipped, "warnings": warnings}
    except KseqError as error:
        result = error
    finally:
        prepared.writer.close()
    with open(os.path.join(part, "result.pickle"), "wb") as handle:
        pickle.dump(result, handle)


def _note_progress(part, count):
    temporary = os.path.join(part, "progress.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(str(count))
    os.replace(temporary, os.path.join(part, "progress"))


if __name__ == "__main__":
    _prepare_part(sys.argv[1])
