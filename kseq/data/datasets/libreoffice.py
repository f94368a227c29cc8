"""The `libreoffice` builder: English -> French/German/Spanish from LibreOffice's own translations.

Sources (Debian, MPL-2.0): help pages aligned by `par_id`/`hd_id`, and the
UI catalogs (`.mo`, msgid = English). Steps, in this order:

1. collapse whitespace; drop `~` accelerator marks from UI strings;
2. keep pairs whose English side has 3–40 words, the other side 1–50 words,
   and the two sides differ;
3. remove duplicates: the first occurrence of each English side wins, help
   pages in sorted path order first, then the `.mo` catalogs in sorted order;
4. split by `h = int(sha1(english).hexdigest(), 16) % 100`: `h < held_out_percent`
   is held out; held-out help paragraphs of 4–40 English words form `test`,
   the other held-out pairs form `valid`; the rest is `train`.

With `held_out_percent=4` the train split is exactly the OpenNMT-tf peer's of
issue #6 (test `h < 2`, valid `h < 4`); the default 6 gives ≥ 1,000 test items
while the peer's test pairs (`h < 2`) stay out of train. `peer_test` holds
those pairs, for comparing with that peer.
"""

import glob
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile

from kseq.atomic_files import TEMPORARY_PREFIX, atomic_write_json
from kseq.arguments import check_choice, check_int
from kseq.data.sources.cache_folders import publish_directory, remove_stale_temporary
from kseq.data.datasets.help_paragraphs import aligned_help_paragraphs, collapse_spaces
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.datasets.libreoffice_packages import fetch_and_unpack
from kseq.data.datasets.mo_catalog import read_mo
from kseq.errors import KseqError

LANGUAGES = ("fr", "de", "es")
SPLITS = ("train", "valid", "test", "peer_test")
FORMAT_VERSION = 1  # of the split rules; report.json's checksums mark a whole cache folder
NOTICE = (
    "Text from LibreOffice's help and user-interface translations (Debian packages "
    "libreoffice-help-*, libreoffice-l10n-*), (c) The Document Foundation and contributors, "
    "licensed under the Mozilla Public License 2.0: https://mozilla.org/MPL/2.0/ . "
    "The Debian copyright files are copied beside this notice.")


logger = logging.getLogger("kseq")


def _progress(message):
    print(f"[libreoffice] {message}", file=sys.stderr, flush=True)


def ui_pairs(catalog_folder):
    """`(pairs, skipped)` from every `.mo` under `catalog_folder`, in sorted order; `~` removed."""
    pairs, skipped = [], 0
    for path in sorted(glob.glob(os.path.join(catalog_folder, "*.mo"))):
        try:
            entries = read_mo(path)
        except (ValueError, OSError):
            skipped += 1
            continue
        pairs += [(english.replace("~", ""), foreign.replace("~", ""))
                  for english, foreign in entries]
    return pairs, skipped


def keep_pair(english, foreign):
    """The length filter: English 3–40 words, the other side 1–50, and not a copy."""
    return 3 <= len(english.split()) <= 40 and 1 <= len(foreign.split()) <= 50 and english != foreign


def held_out_bucket(english):
    """`sha1(english) % 100`: the split key, stable across machines and runs."""
    return int(hashlib.sha1(english.encode("utf-8")).hexdigest(), 16) % 100


def clean_and_split(help_pairs, ui_pairs_, held_out_percent=6):
    """Filters, de-duplicates and splits; returns `(splits, report)`.

    `splits` has `train`, `valid`, `test` and `peer_test` (the pairs with
    `h < 2`, the peer's test set) lists of `(english, foreign)`.

    Example:
    >>> help_pairs = [("Click the OK button.", "Cliquez sur le bouton OK.")]
    >>> splits, report = clean_and_split(help_pairs, [("Save the ~document", "Enregistrer")])
    >>> report["kept"], sum(len(splits[n]) for n in ("train", "valid", "test"))
    (2, 2)
    """
    held_out_percent = check_int("held_out_percent", held_out_percent, 1, 100)
    splits = {name: [] for name in SPLITS}
    seen, filtered, duplicates = set(), 0, 0
    for origin, pairs in (("help", help_pairs), ("ui", ui_pairs_)):
        for english, foreign in pairs:
            english, foreign = collapse_spaces(english), collapse_spaces(foreign)
            if not keep_pair(english, foreign):
                filtered += 1
                continue
            if english in seen:
                duplicates += 1
                continue
            seen.add(english)
            bucket = held_out_bucket(english)
            if bucket < 2:
                splits["peer_test"].append((english, foreign))
            if bucket >= held_out_percent:
                splits["train"].append((english, foreign))
            elif origin == "help" and 4 <= len(english.split()) <= 40:
                splits["test"].append((english, foreign))
            else:
                splits["valid"].append((english, foreign))
    train_sources = {english for english, _ in splits["train"]}
    report = {
        "kept": len(seen), "filtered_by_length_or_copy": filtered,
        "duplicates_removed": duplicates, "held_out_percent": held_out_percent,
        "sizes": {name: len(pairs) for name, pairs in splits.items()},
        "overlap_test_train_sources": sum(e in train_sources for e, _ in splits["test"]),
        "overlap_peer_test_train_sources": sum(e in train_sources for e, _ in splits["peer_test"]),
    }
    return splits, report


def _copy_notice(root, folder):
    with open(os.path.join(folder, "NOTICE.txt"), "w", encoding="utf-8") as handle:
        handle.write(NOTICE + "\n")
        for path in sorted(glob.glob(os.path.join(root, "usr/share/doc/*/copyright"))):
            package = os.path.basename(os.path.dirname(path))
            with open(path, encoding="utf-8", errors="replace") as source:
                handle.write(f"\n===== {package} =====\n{source.read()}")


def build_from_tree(root, language, held_out_percent=6, progress=_progress):
    """Reads an unpacked tree (`root/usr/...`); returns `(splits, report)`."""
    help_root = os.path.join(root, "usr/share/libreoffice/help")
    help_pairs, pages_skipped = aligned_help_paragraphs(
        os.path.join(help_root, "en-US"), os.path.join(help_root, language), progress)
    catalogs = os.path.join(root, f"usr/lib/libreoffice/program/resource/{language}/LC_MESSAGES")
    strings, catalogs_skipped = ui_pairs(catalogs)
    progress(f"{len(help_pairs)} help paragraphs, {len(strings)} UI strings")
    splits, report = clean_and_split(help_pairs, strings, held_out_percent)
    report.update({"language": language, "help_paragraphs": len(help_pairs),
                   "ui_strings": len(strings), "help_pages_skipped": pages_skipped,
                   "catalogs_skipped": catalogs_skipped})
    return splits, report


def libreoffice_dataset(target_language="fr", held_out_percent=6, cache_dir=None):
    """Builds (or reads from the cache) `{"train", "valid", "test", "peer_test"}` pairs.

    The first call downloads three Debian packages (~6 MB), unpacks them and
    writes the splits as TSV files, `report.json` and `NOTICE.txt` (MPL-2.0)
    under `cache_dir` (default `$KSEQ_HOME/libreoffice/<language>`); later
    calls read the TSV files.

    The split folder is written whole in a temporary folder and then renamed;
    `report.json`, written last, holds each file's SHA-256. A cached folder
    without it, or whose files do not match it (a kill, a full disk, an older
    kseq), is ignored with a warning and rebuilt.

    Args:
        target_language: `"fr"`, `"de"` or `"es"`.
        held_out_percent: an integer 1-100: the share of English sides held
            out for `valid` and `test` (0 would leave both empty).
        cache_dir: a folder, or None for the default.

    Raises `KseqError` naming a bad argument, and `LibreOfficeDataError` when
    apt is missing or the language is not offered.
    """
    check_choice("target_language", target_language, LANGUAGES)
    held_out_percent = check_int("held_out_percent", held_out_percent, 1, 100)
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise KseqError(f"`cache_dir` must be a folder path or None. Received: "
                        f"cache_dir={cache_dir!r}")
    folder = os.fspath(cache_dir or os.path.join(kseq_home(), "libreoffice", target_language))
    split_folder = os.path.join(folder, f"v{FORMAT_VERSION}-held{held_out_percent}")
    if os.path.lexists(split_folder):
        try:
            return read_split_folder(split_folder)
        except StaleCacheError as error:
            logger.warning("Ignoring the cached splits in %s and rebuilding them: %s",
                           split_folder, error)
    root = fetch_and_unpack(target_language, folder)
    splits, report = build_from_tree(root, target_language, held_out_percent)
    write_split_folder(split_folder, root, splits, report)
    _progress(f"splits {report['sizes']} in {split_folder}")
    return splits


class StaleCacheError(Exception):
    """A cached split folder that is incomplete, altered or from an older kseq."""


def write_split_folder(split_folder, root, splits, report):
    """Writes the TSV files, `NOTICE.txt` and, last, `report.json` (with checksums) whole.

    Everything goes to a temporary folder beside `split_folder` that is then
    renamed; if another process published a complete folder first, that one is kept.
    """
    parent = os.path.dirname(os.path.abspath(split_folder))
    os.makedirs(parent, exist_ok=True)
    remove_stale_temporary(parent)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
    try:
        files = {}
        for name in SPLITS:
            data = "".join(f"{english}\t{foreign}\n" for english, foreign in splits[name])
            data = data.encode("utf-8")
            with open(os.path.join(scratch, f"{name}.tsv"), "wb") as handle:
                handle.write(data)
            files[f"{name}.tsv"] = {"pairs": len(splits[name]),
                                    "sha256": hashlib.sha256(data).hexdigest()}
        _copy_notice(root, scratch)
        with open(os.path.join(scratch, "NOTICE.txt"), "rb") as handle:
            files["NOTICE.txt"] = {"sha256": hashlib.sha256(handle.read()).hexdigest()}
        # Written last (and fsynced): its presence with matching checksums marks a whole cache.
        atomic_write_json(os.path.join(scratch, "report.json"), {**report, "files": files})
        publish_directory(scratch, split_folder, _is_complete)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # gone already when it was published


def read_split_folder(split_folder):
    """The splits cached in `split_folder`; raises `StaleCacheError` saying what is wrong."""
    try:
        with open(os.path.join(split_folder, "report.json"), "rb") as handle:
            files = json.loads(handle.read().decode("utf-8"))["files"]
        expected = {f"{name}.tsv" for name in SPLITS} | {"NOTICE.txt"}
        if not isinstance(files, dict) or set(files) != expected or not all(
                isinstance(entry, dict) for entry in files.values()):
            raise KeyError("files")
    except FileNotFoundError:
        raise StaleCacheError("no report.json (an interrupted build)") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise StaleCacheError(f"report.json is unreadable or lists no checksums, as an older "
                              f"kseq wrote it ({type(error).__name__}: {error})") from None
    splits = {}
    for name in sorted(files):
        try:
            with open(os.path.join(split_folder, name), "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise StaleCacheError(f"{name} is unreadable ({error.strerror})") from None
        if hashlib.sha256(data).hexdigest() != files[name].get("sha256"):
            raise StaleCacheError(f"{name} does not match its checksum in report.json")
        if name.endswith(".tsv"):
            lines = data.decode("utf-8").split("\n")[:-1]
            splits[name[: -len(".tsv")]] = [tuple(line.split("\t", 1)) for line in lines]
    return {name: splits[name] for name in SPLITS}


def _is_complete(split_folder):
    try:
        read_split_folder(split_folder)
    except StaleCacheError:
        return False
    return True
