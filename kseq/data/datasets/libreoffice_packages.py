"""Fetching LibreOffice's help and UI translations from Debian, without installing them.

`apt-get download` puts the `.deb` files in a cache folder and `dpkg-deb -x`
unpacks them there; nothing is installed (installing would pull LibreOffice).
"""

import contextlib
import os
import sys

from kseq.data.sources import debian_packages
from kseq.data.sources.debian_packages import DebianPackageError

ENGLISH_HELP = "libreoffice-help-en-us"
MARKER = debian_packages.MARKER  # written last inside the tree: the tree is whole


class LibreOfficeDataError(DebianPackageError):
    """The LibreOffice corpus cannot be built here (no apt, no registry, no such language).

    A `KseqError` (one line from the CLI); still a `RuntimeError` for older callers.
    """


def package_names(language):
    """The three Debian packages the `language` corpus comes from."""
    return [ENGLISH_HELP, f"libreoffice-help-{language}", f"libreoffice-l10n-{language}"]


@contextlib.contextmanager
def _as_libreoffice_error():
    """Re-raises the fetcher's `DebianPackageError` as the `LibreOfficeDataError` callers catch."""
    try:
        yield
    except LibreOfficeDataError:
        raise
    except DebianPackageError as error:
        raise LibreOfficeDataError(str(error)) from None


def _progress(message):
    print(f"[libreoffice] {message}", file=sys.stderr)


@_as_libreoffice_error()
def _require_tools():
    debian_packages.require_tools(
        "The libreoffice builder", ", or pass your own source<TAB>target file with --data",
        tools=("apt-get", "apt-cache", "dpkg-deb"))


@_as_libreoffice_error()
def offered_languages():
    """Languages with both a help and a UI-translation package in the apt lists."""
    help_names = debian_packages._run(["apt-cache", "pkgnames", "libreoffice-help-"]).stdout
    l10n_names = set(debian_packages._run(["apt-cache", "pkgnames", "libreoffice-l10n-"])
                     .stdout.split())
    languages = {name[len("libreoffice-help-"):] for name in help_names.split()}
    return sorted(lang for lang in languages if f"libreoffice-l10n-{lang}" in l10n_names)


@_as_libreoffice_error()
def _ensure_apt_lists():
    debian_packages.ensure_apt_lists(_progress)


@_as_libreoffice_error()
def fetch_and_unpack(language, folder):
    """Downloads and unpacks the packages of `language` into `folder/root`; returns that path.

    Skips the work when `folder/root` is complete. The `.deb` files are kept
    in `folder/debs/`; `kseq.data.sources.debian_packages.fetch_into` does the rest:
    only the named packages just downloaded are unpacked, into a temporary
    tree that gets the `.unpacked` marker and is then renamed to `root`. Two
    processes may fetch at once: the first complete tree wins.
    """
    root = os.path.join(folder, "root")
    if debian_packages.tree_is_complete(root):
        return root
    _require_tools()
    _ensure_apt_lists()
    offered = offered_languages()
    if language not in offered:
        raise LibreOfficeDataError(
            f"Debian offers no LibreOffice help + UI translation for {language!r}; offered: "
            f"{', '.join(offered) or 'none (are the apt lists current?)'}. "
            f"Received: language={language!r}")
    return debian_packages.fetch_into(package_names(language), root,
                                      os.path.join(folder, "debs"), _progress)


@_as_libreoffice_error()
def download_packages(names, debs):
    """`apt-get download`s `names` into `debs/`; returns their paths, in the order of `names`
    (`kseq.data.sources.debian_packages.download_packages`)."""
    return debian_packages.download_packages(names, debs, _progress)
