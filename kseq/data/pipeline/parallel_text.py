"""Reading parallel text (TSV) into pairs and `tf.data`."""

import logging

import tensorflow as tf

from kseq.errors import KseqError

logger = logging.getLogger("kseq")


class ParallelTextError(KseqError):
    """A corpus file or line that cannot be used, named by file and line."""


def _open(path):
    """`open(path, "rb")`, with an unreadable path (missing, a folder, no permission)
    reported as a one-line `ParallelTextError` naming it."""
    try:
        return open(path, "rb")
    except OSError as error:
        raise ParallelTextError(f"Cannot read the corpus file ({error.strerror}). "
                                f"Received: {path!r}") from None


def _decode(raw, path, line_number, strict):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if strict:
            raise ParallelTextError(f"{path}:{line_number}: not valid UTF-8 ({error})") from None
        return None


def read_tsv(path, strict=False):
    """Reads `source<TAB>target` lines.

    Empty or whitespace-only sides, lines without exactly one tab and non-UTF-8
    lines are skipped and counted (`strict=True`: raise `ParallelTextError`
    naming the file and line instead). Returns `(pairs, skipped)`.
    """
    rows, skipped = read_tsv_rows(path, strict)
    return [(source, target) for _, source, target in rows], skipped


def read_tsv_rows(path, strict=False):
    """`read_tsv` with each pair's 1-based line number: `([(line, source, target)], skipped)`,
    so a later check can name the line of a bad row."""
    pairs, skipped = [], {"empty": 0, "ragged": 0, "not_utf8": 0}
    with _open(path) as handle:
        for number, raw in enumerate(handle, start=1):
            text = _decode(raw.rstrip(b"\r\n"), path, number, strict)
            if text is None:
                skipped["not_utf8"] += 1
                continue
            fields = text.split("\t")
            if len(fields) != 2:
                if strict:
                    raise ParallelTextError(
                        f"{path}:{number}: expected 2 tab-separated fields, found {len(fields)}")
                skipped["ragged"] += 1
                continue
            if not fields[0].strip() or not fields[1].strip():
                if strict:
                    raise ParallelTextError(f"{path}:{number}: empty source or target")
                skipped["empty"] += 1
                continue
            pairs.append((number, fields[0].strip(), fields[1].strip()))
    _report(path, skipped)
    return pairs, skipped


def _report(path, skipped):
    if any(skipped.values()):
        logger.warning("%s: skipped %s", path, {k: v for k, v in skipped.items() if v})


def pairs_to_dataset(pairs):
    """`(source, target)` pairs -> a `tf.data.Dataset` of string pairs."""
    sources = [s for s, _ in pairs]
    targets = [t for _, t in pairs]
    return tf.data.Dataset.from_tensor_slices((sources, targets))
