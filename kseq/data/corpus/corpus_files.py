"""The files a `--data` argument names: a file, several files, a glob or a folder.

Example:
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> for name in ("b.tsv.gz", "a.tsv", "notes.md"):
...     open(os.path.join(folder, name), "w").close()
>>> [os.path.basename(path) for path in corpus_files(folder)]
['a.tsv', 'b.tsv.gz']
>>> [os.path.basename(path) for path in corpus_files(os.path.join(folder, "*.gz"))]
['b.tsv.gz']
"""

import glob
import hashlib
import os

from kseq.errors import KseqError

# What a folder given as `--data` contributes: its data files, plain or compressed.
DATA_SUFFIXES = (".tsv", ".csv", ".txt", ".tsv.gz", ".csv.gz", ".txt.gz")


def corpus_files(spec):
    """`spec` (a path, a glob pattern, a folder, or a list of those) -> sorted absolute
    file paths, each once.

    A folder gives its data files (`DATA_SUFFIXES`, not recursive). Raises
    `KseqError` for a name that matches nothing, a folder without data files, or a
    mix of CSV and TSV files (their columns are read by different rules).
    """
    specs = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    if not specs:
        raise KseqError("--data names no file. Received: an empty list")
    found = []
    for item in specs:
        found.extend(_files_of(os.fspath(item)))
    files = sorted(dict.fromkeys(os.path.abspath(path) for path in found))
    kinds = {_is_csv_name(path) for path in files}
    if len(kinds) > 1:
        raise KseqError(f"--data mixes CSV and TSV files; give one kind. Received: "
                        f"{', '.join(os.path.basename(p) for p in files[:6])}")
    return files


def _files_of(item):
    if os.path.isdir(item):
        names = sorted(name for name in os.listdir(item) if name.lower().endswith(DATA_SUFFIXES))
        if not names:
            raise KseqError(f"The folder holds no data file ({', '.join(DATA_SUFFIXES)}). "
                            f"Received: --data {item}")
        return [os.path.join(item, name) for name in names]
    if os.path.isfile(item):
        return [item]
    if glob.has_magic(item):
        matches = sorted(path for path in glob.glob(item) if os.path.isfile(path))
        if matches:
            return matches
        raise KseqError(f"No file matches the pattern. Received: --data {item}")
    raise KseqError(f"No such data file. Received: --data {item}")


def _is_csv_name(path):
    return path.lower().removesuffix(".gz").endswith(".csv")


def describe_files(files):
    """A short name for a list of files: the file, or the first one and how many."""
    if len(files) == 1:
        return files[0]
    return f"{files[0]} and {len(files) - 1} more file(s)"


def fingerprint(files):
    """SHA-256 of the files' contents in order (one file: its own SHA-256)."""
    from kseq.atomic_files import file_sha256

    digests = [file_sha256(path) for path in files]
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()
