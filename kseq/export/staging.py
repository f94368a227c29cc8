"""Hidden staging folders: an export is written whole, then renamed into place.

A SIGKILL, a full disk or an exception during an export must leave either no
destination folder or a complete one. So every export writes into a staging
folder beside its destination, named
`.kseq-partial-export.<host>.<pid>.<random>` (`TEMPORARY_PREFIX` of
`kseq.atomic_files`), and a rename on the same file system publishes it only
when it is complete. TF Serving ignores such folders (it reads only all-digit
folders as versions). A staging folder left by a killed process is removed by
the next export into the same folder: one whose host is this host and whose
pid no longer runs. Folders of running processes, of other hosts (a shared
file system) and any other file are never touched.

Example:
>>> import os, tempfile
>>> from kseq.export.staging import publish, staging_directory
>>> parent = tempfile.mkdtemp()
>>> with staging_directory(parent) as staging:
...     os.mkdir(os.path.join(staging, "model"))
...     publish(os.path.join(staging, "model"), os.path.join(parent, "1"))
>>> os.listdir(parent)
['1']
"""

import contextlib
import errno
import logging
import os
import re
import shutil
import socket
import tempfile

from kseq.atomic_files import TEMPORARY_PREFIX

logger = logging.getLogger("kseq")
STAGING_PREFIX = TEMPORARY_PREFIX + "export."


def _host():
    # No dots in the host part, so the name splits into host, pid and random part.
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname()) or "host"


def _owner(name):
    """`(host, pid)` of a staging folder's name, or None for any other name."""
    if not name.startswith(STAGING_PREFIX):
        return None
    parts = name[len(STAGING_PREFIX):].split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def remove_stale_staging(parent):
    """Removes staging folders in `parent` left by dead processes of this host; returns them."""
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    host = _host()
    for name in sorted(names):
        owner = _owner(name)
        path = os.path.join(parent, name)
        if owner is None or owner[0] != host or owner[1] == os.getpid():
            continue
        if _running(owner[1]) or not os.path.isdir(path) or os.path.islink(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
            logger.info("Removed %s, left by an interrupted export (process %d).",
                        path, owner[1])
    return removed


@contextlib.contextmanager
def staging_directory(parent):
    """Yields a fresh, empty staging folder in `parent` (created if missing).

    Stale staging folders of dead processes in `parent` are removed first. The
    staging folder is deleted on exit, success or failure: publish what it
    holds with `publish` before leaving the block.
    """
    os.makedirs(parent, exist_ok=True)
    remove_stale_staging(parent)
    path = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{_host()}.{os.getpid()}.", dir=parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def publish(source, destination, replace=False):
    """Renames the complete folder `source` to `destination` after syncing it to disk.

    `source` must be on the same file system (a staging folder beside
    `destination`). Without `replace`, an existing `destination` raises
    `FileExistsError` and stays as it was. With `replace`, an existing folder
    is moved into `source`'s staging folder first, so readers see the old
    folder, briefly none, then the new one, never a mix.
    """
    _sync_tree(source)
    if os.path.lexists(destination):
        if not replace:
            raise FileExistsError(errno.EEXIST, "already exists", destination)
        old = os.path.join(os.path.dirname(source), "replaced")
        os.rename(destination, old)
    else:
        old = None
    try:
        os.rename(source, destination)
    except OSError as error:
        if old is not None and not os.path.lexists(destination):
            os.rename(old, destination)  # put the previous export back before failing
        if error.errno in (errno.EEXIST, errno.ENOTEMPTY):  # created meanwhile
            raise FileExistsError(errno.EEXIST, "already exists", destination) from error
        raise
    _sync_directory(os.path.dirname(os.path.abspath(destination)))


def _sync_tree(root):
    # Without fsync a power cut after the rename could still publish empty files.
    for folder, _, files in os.walk(root):
        for name in files:
            _sync_path(os.path.join(folder, name), os.O_RDONLY)
        _sync_directory(folder)


def _sync_directory(path):
    _sync_path(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def _sync_path(path, flags):
    with contextlib.suppress(OSError):
        descriptor = os.open(path, flags)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
