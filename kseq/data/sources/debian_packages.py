"""Debian packages used as data: `apt-get download` + `dpkg-deb -x`, never installed.

Several builders read files shipped in Debian packages (help pages, fonts,
dictionaries). Installing them would pull dependencies and need root, so
`apt-get download` fetches the `.deb` files into a private temporary folder
and `dpkg-deb -x` unpacks them into a temporary tree beside the final one.
The tree gets its `.unpacked` marker (one `.deb` file name a line) last and is
then renamed into place (`cache_folders.publish_directory`): a tree with the
marker is whole, and a kill or a second process never leaves a half one
that is trusted.

`unpacked_packages` is the one call builders need; `fetch_into` is the same
work for a builder that keeps its own folder layout (the LibreOffice one).

Example (no apt needed):
>>> from kseq.data.sources.debian_packages import deb_version
>>> deb_version("libreoffice-help-fr_1%3a7.4.7-1_all.deb")
'1:7.4.7-1'
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

from kseq.atomic_files import TEMPORARY_PREFIX, atomic_write_text
from kseq.data.sources.cache_folders import publish_directory, remove_stale_temporary
from kseq.data.sources.kseq_home import kseq_home
from kseq.errors import KseqError

TOOLS = ("apt-get", "dpkg-deb")
MARKER = ".unpacked"  # written last inside the tree: its presence means the tree is whole
APT_LISTS = "/var/lib/apt/lists"
TIMEOUT_S = 600
_PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")  # Debian policy 5.6.1
_CACHE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_NOT_FOUND = re.compile(r"Unable to locate package (\S+)|from package (\S+) as it has no candidate")


class DebianPackageError(KseqError, RuntimeError):
    """Debian packages cannot be fetched here (no apt, no mirror, no such package).

    A `KseqError` (one line from the CLI); also a `RuntimeError`, as the
    LibreOffice builder's error was before this module existed.
    """


def _say(message):
    print(f"[debian] {message}", file=sys.stderr, flush=True)


def unpacked_packages(names, cache_name, progress=None):
    """Downloads the Debian packages `names` (apt-get download, no install) and unpacks them
    (dpkg-deb -x) into one tree `$KSEQ_HOME/debian/<cache_name>/` (kseq.data.sources.kseq_home.kseq_home()),
    published whole (marker last); returns the tree's path. A second call returns at once.
    `progress(message)` is called with one line per step (default: print to stderr).

    A tree whose marker names other packages (the list changed) is fetched
    again and replaces it. The `.deb` files are deleted once unpacked.
    `package_versions(tree)` gives the versions unpacked.

    Raises `DebianPackageError` naming the missing tool or package, or the
    failing step, and what to do.
    """
    names = _check_names(names)
    cache_name = _check_cache_name(cache_name)
    progress = progress or _say
    folder = os.path.join(kseq_home(), "debian")
    root = os.path.join(folder, cache_name)

    def is_complete(path):
        return sorted(package_versions(path) or ()) == sorted(names)

    if is_complete(root):
        return root
    require_tools("kseq", f", or unpack {', '.join(names)} into {root} yourself and list "
                          f"their .deb file names in {os.path.join(root, MARKER)}")
    ensure_apt_lists(progress)
    os.makedirs(folder, exist_ok=True)
    debs = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=folder)
    try:
        return fetch_into(names, root, debs, progress, is_complete)
    finally:
        shutil.rmtree(debs, ignore_errors=True)


def fetch_into(names, root, debs, progress=None, is_complete=None):
    """Downloads `names` into the folder `debs` and unpacks just those into `root`; returns it.

    Only the `.deb` files just downloaded are unpacked (never others found in
    `debs`), into a temporary tree beside `root` that gets the marker and is
    then renamed to `root`. Two processes may fetch at once: the first tree
    passing `is_complete` (default: it has the marker) wins.
    """
    progress = progress or _say
    paths = download_packages(names, debs, progress)
    parent = os.path.dirname(os.path.abspath(root))
    remove_stale_temporary(parent)
    tree = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
    try:
        for index, deb in enumerate(paths, 1):
            progress(f"unpacking {index}: {os.path.basename(deb)}")
            result = _run(["dpkg-deb", "-x", deb, tree])
            if result.returncode:
                raise DebianPackageError(f"dpkg-deb could not unpack it: "
                                         f"{result.stderr.strip()} Received: {deb}")
        atomic_write_text(os.path.join(tree, MARKER),
                          "".join(os.path.basename(deb) + "\n" for deb in paths))
        publish_directory(tree, root, is_complete or tree_is_complete)
    finally:
        shutil.rmtree(tree, ignore_errors=True)  # gone already when it became `root`
    return root


def download_packages(names, debs, progress=None):
    """`apt-get download`s `names` into `debs/`; returns their paths, in the order of `names`.

    The download runs in a fresh temporary folder and each `.deb` is renamed
    into `debs/` once whole, so a kill or a second process never leaves a half
    `.deb` under a final name.
    """
    progress = progress or _say
    os.makedirs(debs, exist_ok=True)
    remove_stale_temporary(debs)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=debs)
    try:
        progress(f"apt-get download {' '.join(names)}")
        result = _run(["apt-get", "download", *names], cwd=scratch)
        if result.returncode:
            raise _download_error(result.stderr, names)
        files = os.listdir(scratch)
        paths = []
        for name in names:  # apt names them <package>_<version>_<arch>.deb
            found = sorted(f for f in files if f.startswith(name + "_") and f.endswith(".deb"))
            if len(found) != 1:
                raise DebianPackageError(
                    f"apt-get download should give one .deb for {name}. Received: {found}")
            paths.append(os.path.join(debs, found[0]))
            os.replace(os.path.join(scratch, found[0]), paths[-1])
        return paths
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _download_error(stderr, names):
    unknown = [a or b for a, b in _NOT_FOUND.findall(stderr or "")]
    if unknown:
        return DebianPackageError(
            f"apt has no package {', '.join(unknown)}: check the name (`apt-cache policy "
            f"{unknown[0]}`), or refresh the lists with `sudo apt-get update`. "
            f"Received: packages={names}")
    return DebianPackageError("apt-get download failed (is the Debian mirror reachable?): "
                              f"{(stderr or '').strip()[-400:]} Received: packages={names}")


def require_tools(who, otherwise="", tools=TOOLS):
    """Raises `DebianPackageError` unless every one of `tools` is on the PATH.

    The message reads "`who` fetches Debian packages with apt-get and unpacks
    them with dpkg-deb; this machine lacks ... Use a Debian/Ubuntu
    machine`otherwise`."
    """
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing:
        raise DebianPackageError(
            f"{who} fetches Debian packages with apt-get and unpacks them with dpkg-deb; this "
            f"machine lacks {', '.join(missing)}. Use a Debian/Ubuntu machine{otherwise}. "
            "Received: missing tools")


def apt_lists_present():
    """Whether apt has package lists (`apt-get update` has run at least once)."""
    return os.path.isdir(APT_LISTS) and any(name.endswith(("Packages", ".lz4", ".xz", ".gz"))
                                            or "Packages" in name
                                            for name in os.listdir(APT_LISTS))


def ensure_apt_lists(progress=None):
    """Runs `apt-get update` when the lists are missing and this is root; else raises."""
    if apt_lists_present():
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        (progress or _say)("apt lists missing: running apt-get update")
        _run(["apt-get", "update"])
    if not apt_lists_present():
        raise DebianPackageError(
            "apt has no package lists; run `sudo apt-get update` (needs the Debian mirror). "
            f"Received: empty {APT_LISTS}")


def tree_is_complete(root):
    """Whether `root` has the marker that `fetch_into` writes last."""
    return os.path.isfile(os.path.join(root, MARKER))


def deb_version(file_name):
    """The version in a `.deb` file name as apt names it (`<package>_<version>_<arch>.deb`)."""
    return urllib.parse.unquote(os.path.basename(file_name).split("_")[1])


def package_versions(root):
    """`{package: version}` of the packages unpacked into `root`; None when it is not whole."""
    try:
        with open(os.path.join(root, MARKER), encoding="utf-8") as handle:
            lines = [line.strip() for line in handle if line.strip()]
        return {line.split("_")[0]: deb_version(line) for line in lines}
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def _run(command, cwd=None, timeout=TIMEOUT_S):
    """Runs a tool; a hung mirror becomes a clear error instead of a hang."""
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DebianPackageError(f"`{' '.join(command)}` took over {timeout} s (is the Debian "
                                 f"mirror reachable?). Received: timeout") from None


def _check_names(names):
    if isinstance(names, str) or not names or not all(
            isinstance(name, str) and _PACKAGE_NAME.fullmatch(name) for name in names):
        raise DebianPackageError("`names` must be a non-empty list of Debian package names "
                                 f"such as ['kanjidic']. Received: names={names!r}")
    return list(dict.fromkeys(names))  # apt downloads a repeated name once


def _check_cache_name(cache_name):
    if not isinstance(cache_name, str) or not _CACHE_NAME.fullmatch(cache_name):
        raise DebianPackageError("`cache_name` must be a plain folder name (letters, digits, "
                                 f"'_', '.', '-'). Received: cache_name={cache_name!r}")
    return cache_name
