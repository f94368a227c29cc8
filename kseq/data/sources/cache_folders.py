"""Cache folders that builders fill in a private temporary folder and then publish whole.

A builder writes everything into `tempfile.mkdtemp(prefix=TEMPORARY_PREFIX)`
beside the final folder, with its completeness mark (a marker file, a report
with checksums) written last, then calls `publish_directory`. A reader of the
final folder therefore sees a whole folder or none; two builders racing each
other both finish, and the first complete folder wins (a later one is dropped,
so no reader has its files replaced under it). A killed builder leaves only a
temporary folder, which `remove_stale_temporary` deletes a day later.

Example:
>>> import os, tempfile
>>> parent = tempfile.mkdtemp()
>>> scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
>>> open(os.path.join(scratch, "done"), "w").close()
>>> final = os.path.join(parent, "cache")
>>> publish_directory(scratch, final, lambda p: os.path.isfile(os.path.join(p, "done")))
True
>>> os.listdir(parent)
['cache']
"""

import contextlib
import os
import shutil
import tempfile
import time

from kseq.atomic_files import TEMPORARY_PREFIX

STALE_SECONDS = 24 * 3600  # a temporary entry a day old belongs to a builder that died


def publish_directory(scratch, path, is_complete):
    """Renames the finished folder `scratch` to `path`; returns whether it did.

    If a folder passing `is_complete` is already at `path`, `scratch` is
    deleted and `path` kept (returns False). Anything else at `path` (left by
    a killed run or an older kseq) is moved aside and deleted first.
    """
    parent = os.path.dirname(os.path.abspath(path))
    for _ in range(5):  # each round either publishes or clears a stale `path`
        try:
            os.rename(scratch, path)  # fails when `path` is a non-empty folder or a file
            return True
        except OSError:
            if not os.path.lexists(path):
                raise
        if is_complete(path):
            shutil.rmtree(scratch, ignore_errors=True)
            return False
        aside = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
        with contextlib.suppress(FileNotFoundError):  # another builder may have moved it
            os.rename(path, os.path.join(aside, "stale"))
        shutil.rmtree(aside, ignore_errors=True)
    raise OSError(f"Could not publish {scratch} as {path}: it kept being replaced")


def remove_stale_temporary(folder, max_age_s=STALE_SECONDS):
    """Deletes `TEMPORARY_PREFIX` files and folders in `folder` older than `max_age_s`."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if not entry.name.startswith(TEMPORARY_PREFIX):
                continue
            with contextlib.suppress(OSError):
                if time.time() - entry.stat(follow_symlinks=False).st_mtime <= max_age_s:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.remove(entry.path)
