"""Fetching LibreOffice's help and UI translations from Debian, without installing them.

`apt-get download` puts the `.deb` files in a cache folder and `dpkg-deb -x`
unpacks them there; nothing is installed (installing would pull LibreOffice).
"""

import os
import shutil
import subprocess
import sys

ENGLISH_HELP = "libreoffice-help-en-us"


class LibreOfficeDataError(RuntimeError):
    """The LibreOffice corpus cannot be built here (no apt, no registry, no such language)."""


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

    Skips the work when `folder/root` is already complete (a marker file is
    written last, so an interrupted fetch is redone).
    """
    root = os.path.join(folder, "root")
    marker = os.path.join(root, ".unpacked")
    if os.path.isfile(marker):
        return root
    _require_tools()
    _ensure_apt_lists()
    offered = offered_languages()
    if language not in offered:
        raise LibreOfficeDataError(
            f"Debian offers no LibreOffice help + UI translation for {language!r}; offered: "
            f"{', '.join(offered) or 'none (are the apt lists current?)'}. "
            f"Received: language={language!r}")
    debs = os.path.join(folder, "debs")
    os.makedirs(debs, exist_ok=True)
    names = package_names(language)
    print(f"[libreoffice] apt-get download {' '.join(names)}", file=sys.stderr)
    result = _run(["apt-get", "download", *names], cwd=debs)
    if result.returncode:
        raise LibreOfficeDataError(
            "apt-get download failed (is the Debian mirror reachable?): "
            f"{result.stderr.strip()[-400:]} Received: packages={names}")
    for index, deb in enumerate(sorted(os.listdir(debs)), 1):
        print(f"[libreoffice] unpacking {index}: {deb}", file=sys.stderr)
        result = _run(["dpkg-deb", "-x", os.path.join(debs, deb), root])
        if result.returncode:
            raise LibreOfficeDataError(f"dpkg-deb could not unpack it: {result.stderr.strip()} "
                                       f"Received: {deb}")
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write("\n".join(sorted(os.listdir(debs))) + "\n")
    return root
