"""Reading parallel text (TSV or CSV) into pairs and `tf.data`.

`read_tsv` / `read_tsv_rows` read `source<TAB>target` lines; `read_table_rows`
reads any data file a user gives (`kseq train --data`, `kseq evaluate --data`):
a `.csv` file with a header row, or a TSV file, with a header when `columns`
names the input and target columns. `iter_table_rows` gives the same rows one
at a time, for files of any size. A gzip-compressed file (known by its first
bytes; `corpus.tsv.gz`, `corpus.csv.gz`) is read the same way.

Example:
>>> import os, tempfile
>>> from kseq.data.pipeline.parallel_text import read_table_rows
>>> path = os.path.join(tempfile.mkdtemp(), "pairs.csv")
>>> with open(path, "w", encoding="utf-8", newline="") as handle:
...     _ = handle.write('id,english,french\\n1,"one, two","un, deux"\\n')
>>> read_table_rows(path, columns=("english", "french"))
([(2, 'one, two', 'un, deux')], {'empty': 0, 'ragged': 0, 'not_utf8': 0})
"""

import codecs
import csv
import gzip
import io
import logging
import os
import zlib

import tensorflow as tf

from kseq.errors import KseqError

logger = logging.getLogger("kseq")


class ParallelTextError(KseqError):
    """A corpus file or line that cannot be used, named by file and line."""


GZIP_MAGIC = b"\x1f\x8b"
# A first header column of these names numbers rows: not an input to train on.
ROW_ID_NAMES = {"id", "idx", "index", "no", "nr", "number", "#", "row", "key"}
# What a damaged gzip file raises while it is read.
DAMAGED = (EOFError, zlib.error, gzip.BadGzipFile)


def _open(path):
    """`open(path, "rb")`, decompressing a gzip file (by its first bytes), with an
    unreadable path (missing, a folder, no permission) reported as a one-line
    `ParallelTextError` naming it."""
    try:
        handle = open(path, "rb")
        if handle.read(2) == GZIP_MAGIC:
            handle.close()  # a GzipFile given a file object would not close it
            return gzip.open(path, "rb")
        handle.seek(0)
        return handle
    except OSError as error:
        raise ParallelTextError(f"Cannot read the corpus file ({error.strerror}). "
                                f"Received: {path!r}") from None


def _damaged(path, line_number, error):
    """The one-line error for a file that cannot be read on (a cut or corrupt gzip)."""
    return ParallelTextError(f"{path}:{line_number}: the file is damaged and cannot be read "
                             f"past this line ({type(error).__name__}: {error}). "
                             f"Received: {path}")


def is_csv(path):
    """Whether `path` is read as CSV: its name ends in `.csv` (or `.csv.gz`), any case."""
    name = os.fspath(path).lower()
    return name.removesuffix(".gz").endswith(".csv")


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
    skipped = _no_skips()
    pairs = list(_tsv_rows(path, strict, skipped))
    _report(path, skipped)
    return pairs, skipped


def _tsv_rows(path, strict, skipped):
    """`(line, source, target)` of each usable `source<TAB>target` line, one at a time."""
    for number, text in _text_lines(path, strict, skipped):
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
        yield number, fields[0].strip(), fields[1].strip()


def _no_skips():
    return {"empty": 0, "ragged": 0, "not_utf8": 0}


def _text_lines(path, strict, skipped):
    """`(1-based line number, text)` of each line of `path`, its line ending (and the first
    line's UTF-8 byte order mark) removed; a line that is not UTF-8 is counted in `skipped`
    (`strict`: raised)."""
    with _open(path) as handle:
        number = 0
        lines = iter(handle)
        while True:
            try:
                raw = next(lines)
            except StopIteration:
                return
            except DAMAGED as error:
                raise _damaged(path, number + 1, error) from None
            number += 1
            if number == 1:  # a byte order mark (Windows editors) is no part of the text
                raw = raw.removeprefix(codecs.BOM_UTF8)
            text = _decode(raw.rstrip(b"\r\n"), path, number, strict)
            if text is None:
                skipped["not_utf8"] += 1
                continue
            yield number, text


def read_table_rows(path, columns=None, strict=False):
    """Reads a user's data file: `([(line, input, target)], skipped)`, as `read_tsv_rows`.

    - A `.csv` or `.csv.gz` file (by its suffix, any case) is read with Python's `csv` module:
      quoted fields may hold commas, tabs, quotes and newlines. Its first row is a
      header; `columns` names the input and target columns (default: the first two).
    - Any other file is a TSV file: `source<TAB>target` lines without a header
      (`read_tsv_rows`), unless `columns` is given: then its first line is a header of
      tab-separated names and the named columns are picked (any number of columns).

    Args:
        path: the file (an image task's input column holds image paths).
        columns: `(input name, target name)`, the header's names, or None.
        strict: raise a `ParallelTextError` naming file and line for a row that would be
            skipped.

    With a header, a row whose number of fields differs from the header's is skipped and
    counted as `ragged`, an empty input or target as `empty`, a row that is not UTF-8 as
    `not_utf8`. Line numbers are the file's 1-based lines (a CSV row's first line). A
    column name the header lacks, a CSV quote left open and an undecodable header are
    one-line `ParallelTextError`s naming the file and line.
    """
    skipped = _no_skips()
    rows = list(iter_table_rows(path, columns, strict, skipped))
    _report(path, skipped)
    return rows, skipped


def iter_table_rows(path, columns=None, strict=False, skipped=None):
    """`read_table_rows`'s `(line, input, target)` rows one at a time, for a file of any
    size; skipped rows are counted into `skipped` (a dict as `read_table_rows` returns)."""
    path = os.fspath(path)
    skipped = _no_skips() if skipped is None else skipped
    if columns is not None:
        columns = check_columns(columns)
    if is_csv(path):
        records = _csv_records(path, strict)
    elif columns is None:
        return _tsv_rows(path, strict, skipped)
    else:
        records = _headed_tsv_records(path, strict)
    return _picked_rows(path, records(skipped), columns, strict, skipped)


def check_columns(columns):
    """`columns` as a tuple `(input name, target name)` of two non-empty strings."""
    if isinstance(columns, str):
        columns = columns.split(",")
    try:
        names = tuple(name.strip() for name in columns)
    except (TypeError, AttributeError):
        names = ()
    if len(names) != 2 or not all(names):
        raise ParallelTextError(f"columns must name two header columns, the input and the "
                                f"target (--columns INPUT,TARGET). Received: {columns!r}")
    if names[0] == names[1]:  # a model would learn to copy its input
        raise ParallelTextError(f"columns must name two different header columns, the input "
                                f"and the target. Received: --columns {','.join(names)}")
    return names


def _csv_records(path, strict):
    """A function of `skipped` giving `(line, fields)` per CSV row, the header first."""
    def records(skipped):
        with _open(path) as raw:
            handle = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="surrogateescape",
                                      newline="")
            reader = csv.reader(handle, strict=True)  # a quote left open is an error
            while True:
                number = reader.line_num + 1  # the row's first line
                try:
                    fields = next(reader)
                except StopIteration:
                    return
                except DAMAGED as error:
                    raise _damaged(path, number, error) from None
                except csv.Error as error:
                    hint = "; a quote left open?" if "end of data" in str(error) else ""
                    raise ParallelTextError(f"{path}:{number}: not readable as CSV ({error}"
                                            f"{hint}). Received: {path}") from None
                if not all(_is_utf8(field) for field in fields):
                    if strict or number == 1:
                        what = "the header is not" if number == 1 else "not"
                        raise ParallelTextError(f"{path}:{number}: {what} valid UTF-8. "
                                                f"Received: {path}")
                    skipped["not_utf8"] += 1
                    continue
                yield number, fields
    return records


def _is_utf8(text):
    try:
        text.encode("utf-8")  # undecodable bytes came in as lone surrogates
        return True
    except UnicodeEncodeError:
        return False


def _headed_tsv_records(path, strict):
    """A function of `skipped` giving `(line, fields)` per TSV line, the header first."""
    def records(skipped):
        header = True
        for number, text in _text_lines(path, strict, skipped):
            if header and number != 1:
                raise ParallelTextError(f"{path}:1: the header is not valid UTF-8. "
                                        f"Received: {path}")
            header = False
            yield number, text.split("\t")
    return records


def _picked_rows(path, records, columns, strict, skipped):
    """`(line, input, target)` rows from `(line, fields)` records, the first one the header."""
    width, picked = None, None
    for number, fields in records:
        if width is None:
            width, picked = len(fields), _column_indexes(path, number, fields, columns)
            continue
        if len(fields) != width:
            if strict:
                raise ParallelTextError(f"{path}:{number}: expected {width} fields (as the "
                                        f"header), found {len(fields)}. Received: {path}")
            skipped["ragged"] += 1
            continue
        source, target = fields[picked[0]].strip(), fields[picked[1]].strip()
        if not source or not target:
            if strict:
                raise ParallelTextError(f"{path}:{number}: empty input or target. "
                                        f"Received: {path}")
            skipped["empty"] += 1
            continue
        yield number, source, target


def _column_indexes(path, number, header, columns):
    """The indexes of the `columns` named in `header` (default: the first two)."""
    names = [name.strip() for name in header]
    listed = ", ".join(repr(name) for name in names[:30]) + (
        f", ... ({len(names)} columns)" if len(names) > 30 else "") or "none"
    if columns is None:
        if len(names) < 2:
            raise ParallelTextError(f"{path}:{number}: the header needs an input and a target "
                                    f"column; it has {listed}. Received: {path}")
        if names[0].lower() in ROW_ID_NAMES and len(names) > 2:  # "id,label,message"
            raise ParallelTextError(f"{path}:{number}: the first column {names[0]!r} looks like "
                                    f"a row id, not the input; name the input and target "
                                    f"columns with --columns INPUT,TARGET (its columns are "
                                    f"{listed}). Received: {path}")
        return 0, 1
    indexes = []
    for name in columns:
        found = [index for index, other in enumerate(names) if other == name]
        if len(found) != 1:
            problem = "no column" if not found else f"{len(found)} columns named"
            raise ParallelTextError(f"{path}:{number}: the header has {problem} {name!r}; its "
                                    f"columns are {listed}. Received: --columns "
                                    f"{','.join(columns)}")
        indexes.append(found[0])
    return tuple(indexes)


def _report(path, skipped):
    if any(skipped.values()):
        logger.warning("%s: skipped %s", path, {k: v for k, v in skipped.items() if v})


def pairs_to_dataset(pairs):
    """`(source, target)` pairs -> a `tf.data.Dataset` of string pairs."""
    sources = [s for s, _ in pairs]
    targets = [t for _, t in pairs]
    return tf.data.Dataset.from_tensor_slices((sources, targets))
