"""The `debian_descriptions` corpus: Debian package descriptions by section, for language models.

Every Debian package has a long description (what `apt show` prints under its
one-line summary), and the archive files each package in a Section (`games`,
`science`, `sound`, ...). `debian_descriptions()` turns them into
`(section, text)` pairs: an offline corpus with categories, for a language
model conditioned on the section (generate a package description for
`games`).

Where the text comes from. apt's `Packages` lists name each package's Section
and the MD5 of its description (`Description-md5`); the long descriptions
themselves are in the `Translation-en` lists, joined on that MD5. A Debian
machine whose apt fetches `Translation-en` (the default) already has both
under `/var/lib/apt/lists`, found with `apt-get indextargets` and read with
`apt-helper cat-file` (which decompresses any format apt stores: lz4, gz,
xz). Docker images usually set `Acquire::Languages "none"`; then one
`apt-get update -o Acquire::Languages=en` runs into a private folder
(`$KSEQ_HOME/debian_descriptions/apt-lists/`; any user, ~16 MB from the
machine's own Debian mirror, a few seconds, the system's lists untouched),
which later calls reuse. `packages=` and `translations=` take the files
instead (plain, `.gz` or `.xz`: a mirror's `dists/bookworm/main/binary-amd64/
Packages.xz` and `dists/bookworm/main/i18n/Translation-en.xz`), which is also
how the tests run without apt.

Cleaning, after Debian Policy 5.6.13: the summary line is dropped; a line
" ." separates paragraphs; every other line is joined to its paragraph with
one space (whitespace runs squeezed; verbatim lines, indented two spaces,
such as "  * item", are joined too). `paragraphs="first"` (the default)
keeps the first paragraph, the one that says what the software does (the
later ones mostly say which part of it this binary package holds: "This
package contains the development files", the same in every section);
`"all"` joins every paragraph with a space. A text of fewer than `min_words`
or more than `max_words` words is left out (so no text is cut mid-way by a
model's maximum length).

Sections: "contrib/games" and "non-free/games" count as `games`. Of bookworm
main (lists of July 2026), the default six (`SECTIONS`) give these texts with
the default options: fonts 517, games 848, graphics 554, net 1,373, science
1,259, sound 658; train 4,181 / valid 481 / test 547 (148k words in train).
Deduplication: a text (whitespace squeezed) is kept once; a text found in two
of the asked sections is left out (its category is ambiguous).

Splits are deterministic: a seeded SHA-1 of the **source package** name
(`keyed_split.split_of`), so the binary packages of one source, whose texts
are often near-copies, land in one split; shares are therefore approximate.
Within a split, pairs are ordered by section, then source, then package.
`background_sections="all"` adds every other section's texts to train only,
uncategorised (`("", text)`, after the categorised ones, ordered by text): of
bookworm main, 26,549 more texts (train 30,730: 1.64M WordPiece-4k tokens
against 250k), for a language model that learns the language from all of
Debian and the sections from six.
The splits are cached as JSON under `$KSEQ_HOME/debian_descriptions/splits/`
with where they came from (the lists' files, their SHA-256 and the release
date); a cached split never changes, even when the mirror moves on.

Licence: each description is part of its package and carries that
package's licence (DFSG-free for main; the corpus holds no code).

Example (no apt needed):
>>> from kseq.data.datasets.debian_descriptions import clean_description
>>> clean_description(" A game of skill.\\n Players take turns.\\n .\\n This package holds data.")
['A game of skill. Players take turns.', 'This package holds data.']
>>> normalise_section("non-free/games")
'games'
"""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from kseq.arguments import check_choice, check_int
from kseq.atomic_files import TEMPORARY_PREFIX, atomic_write_json
from kseq.data.datasets.keyed_split import SPLITS, split_of
from kseq.data.sources.cache_folders import publish_directory, remove_stale_temporary
from kseq.data.sources.debian_packages import DebianPackageError, require_tools
from kseq.data.sources.kseq_home import kseq_home
from kseq.errors import KseqError

SECTIONS = ("fonts", "games", "graphics", "net", "science", "sound")
PARAGRAPHS = ("first", "all")
FORMAT = 1  # bump when parsing, cleaning or splitting changes: cached splits are rebuilt
APT_HELPER = "/usr/lib/apt/apt-helper"
TIMEOUT_S = 600
LICENSE = "each package's own (Debian main: DFSG-free)"
_PRIVATE_LISTS = "apt-lists"
_LISTS_MARKER = ".complete"
_SECTION = re.compile(r"[a-z0-9][a-z0-9+.-]*")


def cache_folder():
    """`$KSEQ_HOME/debian_descriptions`: the private apt lists and the cached splits."""
    return os.path.join(kseq_home(), "debian_descriptions")


def debian_descriptions(sections=SECTIONS, valid_percent=10, test_percent=10, seed=0,
                        paragraphs="first", min_words=8, max_words=100, packages=None,
                        translations=None, background_sections=()):
    """Builds `{"train", "valid", "test"}` lists of `(section, text)` pairs.

    Args:
        sections: the Debian sections to keep (names without "contrib/" or
            "non-free/"), each a category; default `SECTIONS`.
        valid_percent, test_percent: approximate shares of source packages,
            integers >= 0 with a sum <= 99; train keeps the rest.
        seed: an integer >= 0; the same seed always gives the same splits.
        paragraphs: `"first"` (the paragraph saying what the software does)
            or `"all"` (every paragraph, joined with a space).
        min_words, max_words: texts outside this many words are left out.
        packages, translations: paths (or lists of paths) of `Packages` and
            `Translation-en` files to read instead of apt's lists; give both.
        background_sections: more sections (a list, or `"all"`: every section
            not in `sections`) whose texts join the train split without a
            category (`("", text)`): more text for the language itself, while
            valid and test hold the asked sections only. Only texts of
            source packages that the split puts in train are taken, so a
            test text's near-copy in another section (a `lib` package of the
            same source) never reaches training.

    The first call reads apt's lists (fetching `Translation-en` into a private
    folder if apt does not keep it; see the module docstring) and caches the
    splits; later calls read the cache.

    Raises:
        KseqError: a bad argument; no apt here and no files given (naming the
            missing tool); apt cannot fetch the lists; a file that is not a
            `Packages` / `Translation-en` list; no text in an asked section.
    """
    options = _check_options(sections, valid_percent, test_percent, seed, paragraphs,
                             min_words, max_words, packages, translations, background_sections)
    key = hashlib.sha1(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]
    path = os.path.join(cache_folder(), "splits", f"{key}.json")
    cached = _read_cached(path, options)
    if cached is not None:
        return cached
    if packages is not None:
        package_files, translation_files = options["packages"], options["translations"]
    else:
        package_files, translation_files = apt_list_files()
    texts = {f: read_list_file(f) for f in (*package_files, *translation_files)}
    records = join_descriptions([texts[f] for f in package_files],
                                [texts[f] for f in translation_files])
    splits = build_splits(records, sections=options["sections"],
                          valid_percent=valid_percent, test_percent=test_percent, seed=seed,
                          paragraphs=paragraphs, min_words=min_words, max_words=max_words,
                          background_sections=options.get("background_sections", ()))
    source = {"files": [{"path": f, "sha256": _sha256_of_text(text)}
                        for f, text in texts.items()],
              "release_date": _release_date(package_files)}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_json(path, {"format": FORMAT, "options": options, "source": source,
                             **{name: [list(pair) for pair in splits[name]]
                                for name in SPLITS}})
    return splits


def _check_options(sections, valid_percent, test_percent, seed, paragraphs, min_words,
                   max_words, packages, translations, background_sections=()):
    if isinstance(sections, str) or not sections or not all(
            isinstance(s, str) and _SECTION.fullmatch(s) for s in sections):
        raise KseqError("`sections` must be a non-empty list of Debian section names such as "
                        f"['games', 'science']. Received: sections={sections!r}")
    valid_percent = check_int("valid_percent", valid_percent, minimum=0, maximum=99)
    test_percent = check_int("test_percent", test_percent, minimum=0, maximum=99)
    if valid_percent + test_percent > 99:
        raise KseqError("valid_percent + test_percent must be at most 99 (train keeps the rest). "
                        f"Received: valid_percent={valid_percent}, test_percent={test_percent}")
    check_int("seed", seed, minimum=0)
    check_choice("paragraphs", paragraphs, PARAGRAPHS)
    min_words = check_int("min_words", min_words, minimum=1)
    check_int("max_words", max_words, minimum=min_words)
    if (packages is None) != (translations is None):
        raise KseqError("Pass both `packages` and `translations` files, or neither (apt's "
                        f"lists). Received: packages={packages!r}, translations={translations!r}")
    options = {"sections": sorted(dict.fromkeys(sections)), "valid_percent": valid_percent,
               "test_percent": test_percent, "seed": seed, "paragraphs": paragraphs,
               "min_words": min_words, "max_words": max_words}
    if background_sections:  # absent from the options (and the cache key) when not asked
        options["background_sections"] = _check_background(background_sections)
    if packages is not None:
        for name, files in (("packages", packages), ("translations", translations)):
            files = [files] if isinstance(files, (str, os.PathLike)) else list(files)
            missing = [os.fspath(f) for f in files if not os.path.isfile(f)]
            if not files or missing:
                raise KseqError(f"`{name}` must name existing list files. "
                                f"Received: {name}={missing or files!r}")
            options[name] = [os.path.abspath(f) for f in files]
            # the files' contents are part of the key: a changed file is read again
            options[name + "_sha256"] = [_sha256_of_text(read_list_file(f)) for f in files]
    return options


def _check_background(background_sections):
    if background_sections == "all":
        return "all"
    if isinstance(background_sections, str) or not all(
            isinstance(s, str) and _SECTION.fullmatch(s) for s in background_sections):
        raise KseqError("`background_sections` must be \"all\" or a list of Debian section "
                        f"names. Received: background_sections={background_sections!r}")
    return sorted(dict.fromkeys(background_sections))


def _read_cached(path, options):
    try:
        with open(path, encoding="utf-8") as handle:
            cached = json.load(handle)
        if cached.get("format") == FORMAT and cached.get("options") == options:
            return {name: [tuple(pair) for pair in cached[name]] for name in SPLITS}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # absent, or from another kseq: build it again
    return None


def parse_records(text):
    """The stanzas of a deb822 list (`Packages`, `Translation-en`) as dicts.

    A continuation line (starting with a space or tab) is appended to its
    field's value after a newline, as it is (leading space included); the
    first line's value is stripped.
    """
    records, fields, name = [], {}, None
    for number, line in enumerate(io.StringIO(text), 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            if fields:
                records.append(fields)
            fields, name = {}, None
        elif line[0] in " \t":
            if name is None:
                raise KseqError(f"A continuation line should follow a field in a Debian list "
                                f"(line {number}). Received: {line[:80]!r}")
            fields[name] += "\n" + line
        else:
            name, colon, value = line.partition(":")
            if not colon:
                raise KseqError(f"A Debian list line should be 'Field: value' (line {number}). "
                                f"Received: {line[:80]!r}")
            fields[name] = value.strip()
    if fields:
        records.append(fields)
    return records


def clean_description(long_description):
    """The paragraphs of a long description (the lines after the summary), cleaned.

    " ." separates paragraphs; the other lines are joined with one space and
    whitespace runs squeezed; empty paragraphs are dropped.
    """
    paragraphs, current = [], []
    for line in long_description.split("\n"):
        if line.strip() == ".":
            paragraphs.append(" ".join(current))
            current = []
        elif line.strip():
            current.append(" ".join(line.split()))
    paragraphs.append(" ".join(current))
    return [p for p in paragraphs if p]


def normalise_section(section):
    """A package's Section without its archive area: `"contrib/games"` -> `"games"`."""
    return section.strip().rsplit("/", 1)[-1]


def join_descriptions(packages_texts, translations_texts):
    """`(package, source, section, long_description)` of every package with an English
    long description, ordered by package then source.

    `packages_texts` are `Packages` lists (Section, Source, Description-md5),
    `translations_texts` `Translation-en` lists (Description-md5,
    Description-en), joined on the MD5. A package listed twice (two suites)
    with the same description counts once. A `Packages` stanza holding its
    long description itself (as old lists did) needs no translation.
    """
    descriptions = {}
    for text in translations_texts:
        for record in parse_records(text):
            if "Description-md5" not in record or "Description-en" not in record:
                raise KseqError("A Translation-en stanza should have Description-md5 and "
                                f"Description-en. Received: {sorted(record)}")
            descriptions[record["Description-md5"]] = record["Description-en"]
    rows = set()
    for text in packages_texts:
        for record in parse_records(text):
            if "Package" not in record:
                raise KseqError(f"A Packages stanza should have a Package field. "
                                f"Received: {sorted(record)}")
            full = record.get("Description", "")
            if "\n" not in full:
                full = descriptions.get(record.get("Description-md5"), full)
            _, _, long_description = full.partition("\n")
            if not long_description.strip() or "Section" not in record:
                continue
            source = (record.get("Source") or record["Package"]).split()[0]
            rows.add((record["Package"], source, normalise_section(record["Section"]),
                      long_description))
    return sorted(rows)


def build_splits(records, sections=SECTIONS, valid_percent=10, test_percent=10, seed=0,
                 paragraphs="first", min_words=8, max_words=100, background_sections=()):
    """`{"train", "valid", "test"}` lists of `(section, text)` from `join_descriptions`'s
    records: cleaned, length-filtered, deduplicated, split by source package (see the
    module docstring); then the background sections' train texts as `("", text)`.
    Raises `KseqError` when an asked section has no text."""
    found = {}  # text -> (section, source, package) of its first record; None if ambiguous
    background = {}  # text -> source of a background section's record
    for package, source, section, long_description in records:
        in_background = section not in sections
        if in_background and not (background_sections == "all"
                                  or section in background_sections):
            continue
        cleaned = clean_description(long_description)
        text = (cleaned[:1] if paragraphs == "first" else [" ".join(cleaned)])[0] \
            if cleaned else ""
        if not min_words <= len(text.split()) <= max_words:
            continue
        if in_background:
            background.setdefault(text, source)
        elif text in found and found[text] is not None and found[text][0] != section:
            found[text] = None  # in two asked sections: its category is ambiguous
        elif text not in found:
            found[text] = (section, source, package)
    kept = sorted((where, text) for text, where in found.items() if where is not None)
    empty = sorted(set(sections) - {section for (section, _, _), _ in kept})
    if empty:
        raise KseqError(f"These sections have no description of {min_words}-{max_words} words "
                        f"in the lists read (check the names: `apt-cache show <package>` "
                        f"prints a Section). Received: sections={empty}")
    splits = {name: [] for name in SPLITS}
    for (section, source, _), text in kept:
        splits[split_of(source, seed, valid_percent, test_percent)].append((section, text))
    # a background text is dropped when an asked section has it (even ambiguously), or when
    # its source is not a training one (its package's siblings may be in valid or test)
    splits["train"] += [("", text) for text, source in sorted(background.items())
                        if text not in found
                        and split_of(source, seed, valid_percent, test_percent) == "train"]
    return splits


def read_list_file(path):
    """The text of an apt list file: plain, `.gz`, `.xz`, or (through apt-helper) `.lz4`."""
    path = os.fspath(path)
    try:
        if path.endswith(".gz"):
            import gzip
            with gzip.open(path, "rb") as handle:
                data = handle.read()
        elif path.endswith(".xz"):
            import lzma
            with lzma.open(path, "rb") as handle:
                data = handle.read()
        elif path.endswith((".lz4", ".bz2", ".zst")):
            data = _apt_helper_cat(path)
        else:
            with open(path, "rb") as handle:
                data = handle.read()
        return data.decode("utf-8")
    except (OSError, EOFError, ValueError) as error:  # lzma/gzip errors are OSError/EOFError
        raise KseqError(f"Cannot read the Debian list file ({error}). Received: {path}") from None


def _apt_helper_cat(path):
    if not os.path.isfile(APT_HELPER):
        raise DebianPackageError(f"Reading {os.path.basename(path)} needs apt's {APT_HELPER} "
                                 f"(apt is not installed here). Received: {path}")
    result = _run([APT_HELPER, "cat-file", path], text=False)
    if result.returncode:
        raise KseqError(f"apt-helper cannot read the list file: "
                        f"{result.stderr.decode('utf-8', 'replace').strip()} Received: {path}")
    return result.stdout


def apt_list_files():
    """`(Packages files, Translation-en files)` apt keeps on this machine, else those of
    the private lists folder (fetched with one `apt-get update` the first time)."""
    require_tools("debian_descriptions", ", or pass packages= and translations= files (a "
                  "Debian mirror's dists/<suite>/main/binary-amd64/Packages.xz and "
                  "dists/<suite>/main/i18n/Translation-en.xz)", tools=("apt-get",))
    packages, translations = _indexed_files()
    if packages and translations:
        return packages, translations
    private = os.path.join(cache_folder(), _PRIVATE_LISTS)
    if not os.path.isfile(os.path.join(private, _LISTS_MARKER)):
        _fetch_private_lists(private)
    packages, translations = _indexed_files(private)
    if not packages or not translations:
        raise DebianPackageError("apt-get update gave no Packages or Translation-en lists (are "
                                 "Debian sources configured in /etc/apt?). "
                                 f"Received: packages={packages}, translations={translations}")
    return packages, translations


def _apt_options(lists=None):
    options = ["-o", "Acquire::Languages=en"]
    return options + (["-o", f"Dir::State::Lists={lists}"] if lists else [])


def _indexed_files(lists=None):
    """The Packages and English Translation files apt has (`apt-get indextargets`)."""
    result = _run(["apt-get", "indextargets", *_apt_options(lists),
                   "--format", "$(IDENTIFIER)\t$(LANGUAGE)\t$(FILENAME)"])
    if result.returncode:
        raise DebianPackageError(f"apt-get indextargets failed: {result.stderr.strip()[-300:]} "
                                 "Received: apt-get indextargets")
    packages, translations = [], []
    for line in result.stdout.splitlines():
        identifier, _, rest = line.partition("\t")
        language, _, filename = rest.partition("\t")
        if identifier == "Packages" and os.path.isfile(filename):
            packages.append(filename)
        elif identifier == "Translations" and language == "en" and os.path.isfile(filename):
            translations.append(filename)
    return sorted(packages), sorted(translations)


def _fetch_private_lists(private):
    """`apt-get update` with English translations into a temporary folder, published whole
    as `private` (the system's lists and apt's caches untouched)."""
    parent = os.path.dirname(private)
    os.makedirs(parent, exist_ok=True)
    remove_stale_temporary(parent)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
    try:
        lists = os.path.join(scratch, "lists")
        os.makedirs(os.path.join(lists, "partial"))
        os.makedirs(os.path.join(scratch, "cache", "archives", "partial"))
        print("[debian_descriptions] apt-get update -o Acquire::Languages=en (private lists "
              f"in {private})", file=sys.stderr, flush=True)
        result = _run(["apt-get", "update", *_apt_options(lists), "-o",
                       f"Dir::Cache={os.path.join(scratch, 'cache')}", "-o",
                       "APT::Get::List-Cleanup=false"])
        if result.returncode:
            raise DebianPackageError("apt-get update could not fetch the lists (is the Debian "
                                     f"mirror reachable?): {result.stderr.strip()[-300:]} "
                                     "Received: apt-get update")
        shutil.rmtree(os.path.join(scratch, "cache"), ignore_errors=True)
        with open(os.path.join(lists, _LISTS_MARKER), "w", encoding="utf-8") as handle:
            handle.write("complete\n")
        publish_directory(lists, private,
                          lambda p: os.path.isfile(os.path.join(p, _LISTS_MARKER)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _release_date(package_files):
    """The `Date:` of the Release file beside the first Packages list, if apt kept one."""
    name = os.path.basename(package_files[0]) if package_files else ""
    match = re.match(r"(.*_dists_[^_]+)_", name)
    if not match:
        return None
    release = os.path.join(os.path.dirname(package_files[0]), match.group(1) + "_InRelease")
    try:
        with open(release, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Date:"):
                    return line.partition(":")[2].strip()
    except OSError:
        return None
    return None


def _sha256_of_text(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _run(command, text=True):
    try:
        return subprocess.run(command, capture_output=True, text=text, check=False,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise DebianPackageError(f"`{' '.join(command)}` took over {TIMEOUT_S} s (is the Debian "
                                 "mirror reachable?). Received: timeout") from None
