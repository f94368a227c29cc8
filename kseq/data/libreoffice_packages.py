"""Fetching LibreOffice's help and UI translations from Debian, without installing them.

`apt-get download` puts the `.deb` files in a cache folder and `dpkg-deb -x`
unpacks them there; nothing is installed (installing would pull LibreOffice).
"""

import os
import shutil
import subprocess
import sys
import tempfile

from kseq.atomic_files import TEMPORARY_PREFIX, atomic_write_text
from kseq.data.cache_folders import publish_directory, remove_stale_temporary
from kseq.errors import KseqError

ENGLISH_HELP = "libreoffice-help-en-us"
MARKER = ".unpacked"  # written last inside the tree: its presence means the tree is whole


class LibreOfficeDataError(KseqError, RuntimeError):
    """The LibreOffice corpus cannot be built here (no apt, no registry, no such language).

    A `KseqError` (one line from the CLI); still a `RuntimeError` for older callers.
    """


def package_names(language):
    """The three Debian packages the `language` corpus comes from."""
    return [ENGLISH_HELP, f"libreoffice-help-{language}", f"libreoffice-l10n-{language}"]


def _run(command, cwd=None, timeout=600):
    """Runs a tool; a hung mirror becomes a clear error instead of a hang."""
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LibreOfficeDataError(f"`{' '.join(command)}` took over {timeout} s (is the Debian "
                                   f"mirror reachable?). Received: timeout") from None


def _require_tools():
    missing = [tool for tool in ("apt-get", "apt-cache", "dpkg-deb") if not shutil.which(tool)]
    if missing:
        raise LibreOfficeDataError(
            "The libreoffice builder fetches Debian packages with apt-get and unpacks them with "
            f"dpkg-deb; this machine lacks {', '.join(missing)}. Use a Debian/Ubuntu machine, or "
            "pass your own source<TAB>target file with --data. Received: missing tools")


def _apt_lists_present():
    lists = "/var/lib/apt/lists"
    return os.path.isdir(lists) and any(name.endswith(("Packages", ".lz4", ".xz", ".gz"))
                                        or "Packages" in name for name in os.listdir(lists))


def offered_languages():
    """Languages with both a help and a UI-translation package in the apt lists."""
    help_names = _run(["apt-cache", "pkgnames", "libreoffice-help-"]).stdout.split()
    l10n_names = set(_run(["apt-cache", "pkgnames", "libreoffice-l10n-"]).stdout.split())
    languages = {name[len("libreoffice-help-"):] for name in help_names}
    return sorted(lang for lang in languages if f"libreoffice-l10n-{lang}" in l10n_names)


def _ensure_apt_lists():
    if _apt_lists_present():
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        print("[libreoffice] apt lists missing: running apt-get update", file=sys.stderr)
        _run(["apt-get", "update"])
    if not _apt_lists_present():
        raise LibreOfficeDataError(
            "apt has no package lists; run `sudo apt-get update` (needs the Debian mirror). "
            "Received: empty /var/lib/apt/lists")


def fetch_and_unpack(language, folder):
    """Downloads and unpacks the packages of `language` into `folder/root`; returns that path.

    Skips the work when `folder/root` is complete. Nothing half done is ever
    trusted: `apt-get download` runs in a private temporary folder and each
    `.deb` is renamed into `folder/debs/` once whole; only the named packages
    just downloaded are unpacked (never other files found in `debs/`), into a
    temporary tree that gets the `.unpacked` marker and is then renamed to
    `root`. Two processes may fetch at once: the first complete tree wins.
    """
    root = os.path.join(folder, "root")
    if _tree_is_complete(root):
        return root
    _require_tools()
    _ensure_apt_lists()
    offered = offered_languages()
    if language not in offered:
        raise LibreOfficeDataError(
            f"Debian offers no LibreOffice help + UI translation for {language!r}; offered: "
            f"{', '.join(offered) or 'none (are the apt lists current?)'}. "
            f"Received: language={language!r}")
    debs = download_packages(package_names(language), os.path.join(folder, "debs"))
    remove_stale_temporary(folder)
    tree = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=folder)
    try:
        for index, deb in enumerate(debs, 1):
            print(f"[libreoffice] unpacking {index}: {os.path.basename(deb)}", file=sys.stderr)
            result = _run(["dpkg-deb", "-x", deb, tree])
            if result.returncode:
                raise LibreOfficeDataError(f"dpkg-deb could not unpack it: "
                                           f"{result.stderr.strip()} Received: {deb}")
        atomic_write_text(os.path.join(tree, MARKER),
                          "".join(os.path.basename(deb) + "\n" for deb in debs))
        publish_directory(tree, root, _tree_is_complete)
    finally:
        shutil.rmtree(tree, ignore_errors=True)  # gone already when it became `root`
    return root


def download_packages(names, debs):
    """`apt-get download`s `names` into `debs/`; returns their paths, in the order of `names`.

    The download runs in a fresh temporary folder, so a kill or a second
    process never leaves a half `.deb` under a final name.
    """
    os.makedirs(debs, exist_ok=True)
    remove_stale_temporary(debs)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=debs)
    try:
        print(f"[libreoffice] apt-get download {' '.join(names)}", file=sys.stderr)
        result = _run(["apt-get", "download", *names], cwd=scratch)
        if result.returncode:
            raise LibreOfficeDataError(
                "apt-get download failed (is the Debian mirror reachable?): "
                f"{result.stderr.strip()[-400:]} Received: packages={names}")
        files = os.listdir(scratch)
        paths = []
        for name in names:  # apt names them <package>_<version>_<arch>.deb
            found = sorted(f for f in files if f.startswith(name + "_") and f.endswith(".deb"))
            if len(found) != 1:
                raise LibreOfficeDataError(
                    f"apt-get download should give one .deb for {name}. Received: {found}")
            paths.append(os.path.join(debs, found[0]))
            os.replace(os.path.join(scratch, found[0]), paths[-1])
        return paths
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _tree_is_complete(root):
    return os.path.isfile(os.path.join(root, MARKER))
