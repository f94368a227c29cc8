"""Writes that a kill, a full disk or a second process can never leave half done.

Every file kseq writes for later runs to trust (models, checkpoints, caches,
run metadata) is written under a unique temporary name in the same folder and
then moved over the final name with `os.replace`, which is atomic on one file
system: a reader sees the old file or the new one, never a torn one. A failed
write removes its temporary file and leaves the old file as it was.

Example:
>>> import os, tempfile
>>> from kseq.atomic_files import atomic_path, atomic_write_text
>>> folder = tempfile.mkdtemp()
>>> atomic_write_text(os.path.join(folder, "a.txt"), "one\\n")
>>> with atomic_path(os.path.join(folder, "b.txt")) as scratch:
...     with open(scratch, "w") as handle:
...         _ = handle.write("two\\n")
>>> sorted(os.listdir(folder))
['a.txt', 'b.txt']
"""

import contextlib
import errno
import hashlib
import json
import os
import tempfile

# Temporary names start with this, so cleaners and listings can tell them apart.
TEMPORARY_PREFIX = ".kseq-partial-"


def _current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates files readable by their owner only; a saved model should get the
# permissions any other new file gets.
FILE_MODE = 0o666 & ~_current_umask()


@contextlib.contextmanager
def atomic_path(path, suffix=None):
    """Yields a fresh temporary path beside `path`; on success it replaces `path`.

    `suffix` defaults to the final name's extension (Keras insists on `.keras`
    and `.weights.h5`). On any exception the temporary file is removed and the
    exception propagates; `path` is untouched.
    """
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if suffix is None:
        suffix = ".weights.h5" if name.endswith(".weights.h5") else os.path.splitext(name)[1]
    handle, scratch = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=suffix, dir=folder)
    os.close(handle)
    try:
        yield scratch
        _fsync_file(scratch)
        os.chmod(scratch, FILE_MODE)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(scratch)
        raise


def reserve_space(path, size):
    """Makes sure `size` bytes can be written to `path`, or raises `OSError` now.

    HDF5 (under Keras's `.weights.h5` and `.keras` writers) reacts to a full
    disk or a file-size limit with dozens of tracebacks and then a segmentation
    fault; claiming the space first with plain Python turns that into one
    `OSError` (ENOSPC or EFBIG) before HDF5 writes anything.
    """
    with open(path, "wb") as handle:
        try:
            os.posix_fallocate(handle.fileno(), 0, max(1, int(size)))
        except OSError as error:
            if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            block = b"\0" * (1 << 20)  # a file system without fallocate: write zeros
            for start in range(0, int(size), len(block)):
                handle.write(block[: int(size) - start])
            handle.flush()


def atomic_write_text(path, text):
    """Writes `text` (UTF-8) to `path` atomically."""
    with atomic_path(path) as scratch:
        with open(scratch, "w", encoding="utf-8") as handle:
            handle.write(text)


def atomic_write_json(path, data):
    """Writes `data` as indented JSON to `path` atomically."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def file_sha256(path):
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync_file(path):
    # Without fsync a power cut after os.replace can still leave an empty file.
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
