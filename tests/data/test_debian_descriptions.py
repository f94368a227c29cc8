"""The Debian descriptions builder on tiny Packages / Translation-en lists written here (no apt)."""

import gzip
import json
import os
import random

import pytest

from kseq.data.datasets.debian_descriptions import (
    build_splits,
    clean_description,
    debian_descriptions,
    join_descriptions,
    normalise_section,
    parse_records,
)
from kseq.errors import KseqError

GAME = (" A puzzle game where you slide tiles on a\n board to merge them into"
        " larger tiles.\n .\n This package contains the data files.")
BULLETS = (" A synthesizer for the command line that plays\n notes from text files.\n"
           " .\n Features:\n  * many voices\n  * simple syntax")
SCIENCE = " A tool that fits curves to measured data and\n\tplots the residuals for you."
SHARED = " A small library used by games and sound programs alike, packaged here."


def stanza(package, section, md5, source=None, description="summary"):
    lines = [f"Package: {package}"] + ([f"Source: {source}"] if source else [])
    lines += ["Version: 1.0-1", f"Description: {description}", f"Description-md5: {md5}",
              "Tag: role::program,\n use::gameplaying", f"Section: {section}"]
    return "\n".join(lines) + "\n"


PACKAGES = "\n".join([
    stanza("2048", "games", "m1"),
    stanza("2048-data", "contrib/games", "m1b", source="2048 (1.0-1)"),
    stanza("synth", "non-free/sound", "m2"),
    stanza("curvefit", "science", "m3"),
    stanza("libshared-games", "games", "m4"),
    stanza("libshared-sound", "sound", "m5"),
    stanza("untranslated", "games", "m9"),
    stanza("tiny", "games", "m6"),
    stanza("other", "libs", "m7"),
])
TRANSLATIONS = "\n".join(
    f"Package: {package}\nDescription-md5: {md5}\nDescription-en: summary\n{long}\n"
    for package, md5, long in [("2048", "m1", GAME), ("2048-data", "m1b", GAME),
                               ("synth", "m2", BULLETS), ("curvefit", "m3", SCIENCE),
                               ("libshared-games", "m4", SHARED),
                               ("libshared-sound", "m5", SHARED),
                               ("tiny", "m6", " Too short."),
                               ("other", "m7", " A library of other things, for many uses in science.")])
SECTIONS = ["games", "science", "sound"]


@pytest.fixture
def lists(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    packages, translations = tmp_path / "Packages", tmp_path / "Translation-en.gz"
    packages.write_text(PACKAGES, encoding="utf-8")
    with gzip.open(translations, "wt", encoding="utf-8") as handle:
        handle.write(TRANSLATIONS)
    return str(packages), str(translations)


def test_parse_and_clean():
    records = parse_records(PACKAGES)
    assert len(records) == 9 and records[0]["Tag"] == "role::program,\n use::gameplaying"
    assert clean_description(GAME) == [
        "A puzzle game where you slide tiles on a board to merge them into larger tiles.",
        "This package contains the data files."]
    assert clean_description(BULLETS)[1] == "Features: * many voices * simple syntax"
    assert clean_description(SCIENCE) == [
        "A tool that fits curves to measured data and plots the residuals for you."]
    assert [normalise_section(s) for s in ("contrib/games", "non-free/sound", "net")] == [
        "games", "sound", "net"]
    with pytest.raises(KseqError, match="Received: ' orphan'"):
        parse_records(" orphan")


def test_join_normalises_sections_and_skips_untranslated():
    rows = join_descriptions([PACKAGES], [TRANSLATIONS])
    by_package = {package: (source, section) for package, source, section, _ in rows}
    assert by_package["2048-data"] == ("2048", "games")  # Source's version dropped
    assert by_package["synth"] == ("synth", "sound")  # non-free/ dropped
    assert "untranslated" not in by_package


def test_build_splits_cleans_filters_and_deduplicates():
    rows = join_descriptions([PACKAGES], [TRANSLATIONS])
    splits = build_splits(rows, sections=SECTIONS, valid_percent=0, test_percent=0)
    assert splits["valid"] == splits["test"] == []
    assert sorted(splits["train"]) == [
        ("games", "A puzzle game where you slide tiles on a board to merge them into larger "
                  "tiles."),  # once, though two packages carry it
        ("science", "A tool that fits curves to measured data and plots the residuals for you."),
        ("sound", "A synthesizer for the command line that plays notes from text files.")]
    # SHARED is in games and sound: ambiguous, left out; "Too short." is under min_words.
    everything = build_splits(rows, sections=SECTIONS, valid_percent=0, test_percent=0,
                              paragraphs="all", min_words=1)["train"]
    assert ("sound", "A synthesizer for the command line that plays notes from text files. "
                     "Features: * many voices * simple syntax") in everything
    assert ("games", "Too short.") in everything
    with pytest.raises(KseqError, match=r"Received: sections=\['fonts'\]"):
        build_splits(rows, sections=["games", "fonts"])


def test_background_sections_join_train_only_uncategorised():
    rows = join_descriptions([PACKAGES], [TRANSLATIONS])
    plain = build_splits(rows, sections=["games"], valid_percent=0, test_percent=0)
    extra = build_splits(rows, sections=["games"], valid_percent=0, test_percent=0,
                         background_sections="all")
    # science, sound and libs texts come in without a category; the games text stays
    # categorised, and SHARED (a games text too) is not repeated as a background text
    assert extra["train"][:len(plain["train"])] == plain["train"]
    assert sorted(extra["train"][len(plain["train"]):]) == [
        ("", "A library of other things, for many uses in science."),
        ("", "A synthesizer for the command line that plays notes from text files."),
        ("", "A tool that fits curves to measured data and plots the residuals for you.")]
    assert build_splits(rows, sections=["games"], valid_percent=0, test_percent=0,
                        background_sections=["libs"])["train"][-1] == (
        "", "A library of other things, for many uses in science.")
    # a background text whose source is in valid or test stays out of every split
    many = [(f"p{i}", f"p{i}", "games" if i % 2 else "libs",
             f" Text number {i} that is long enough to be kept by the filter.")
            for i in range(200)]
    splits = build_splits(many, sections=["games"], seed=1, background_sections="all")
    assert all(c == "games" for name in ("valid", "test") for c, _ in splits[name])
    background = [t for c, t in splits["train"] if c == ""]
    assert 60 <= len(background) < 100  # about 80% of the 100 libs texts
    with pytest.raises(KseqError, match="background_sections"):
        debian_descriptions(background_sections="libs")


def test_split_is_deterministic_and_keeps_a_source_together():
    rows = [(f"pkg{i}-{part}", f"pkg{i}", ["games", "science"][i % 2],
             f" Description number {i} of the {part} part, long enough to be kept here.")
            for i in range(200) for part in ("bin", "data")]
    splits = build_splits(rows, sections=["games", "science"], seed=3)
    shuffled = rows[:]
    random.Random(0).shuffle(shuffled)
    assert build_splits(shuffled, sections=["games", "science"], seed=3) == splits
    assert build_splits(rows, sections=["games", "science"], seed=4) != splits
    where = {text.split(" of the")[0]: name for name, pairs in splits.items()
             for _, text in pairs}
    for name, pairs in splits.items():
        for _, text in pairs:  # both binaries of a source are in the same split
            assert where[text.split(" of the")[0]] == name
    assert 20 <= len(splits["test"]) <= 60 and 20 <= len(splits["valid"]) <= 60


def test_builder_reads_files_and_caches(lists, tmp_path):
    packages, translations = lists
    splits = debian_descriptions(sections=SECTIONS, valid_percent=0, test_percent=0,
                                 packages=packages, translations=translations)
    assert len(splits["train"]) == 3 and isinstance(splits["train"][0], tuple)
    cached, = os.listdir(tmp_path / "home" / "debian_descriptions" / "splits")
    with open(tmp_path / "home" / "debian_descriptions" / "splits" / cached) as handle:
        record = json.load(handle)
    assert record["options"]["sections"] == SECTIONS and len(record["source"]["files"]) == 2
    assert debian_descriptions(sections=SECTIONS, valid_percent=0, test_percent=0,
                               packages=packages, translations=translations) == splits
    with open(packages, "a", encoding="utf-8") as handle:  # a changed list is read again
        handle.write("\n" + stanza("extra", "science", "m7"))
    again = debian_descriptions(sections=SECTIONS, valid_percent=0, test_percent=0,
                                packages=packages, translations=translations)
    assert ("science", "A library of other things, for many uses in science.") in again["train"]
    assert len(os.listdir(tmp_path / "home" / "debian_descriptions" / "splits")) == 2


def test_clear_errors(lists, monkeypatch, tmp_path):
    packages, _ = lists
    with pytest.raises(KseqError, match="Pass both"):
        debian_descriptions(packages=packages)
    with pytest.raises(KseqError, match=r"Received: sections='games'"):
        debian_descriptions(sections="games")
    monkeypatch.setenv("PATH", str(tmp_path))  # no apt-get on the PATH
    with pytest.raises(KseqError, match="lacks apt-get.*packages= and translations="):
        debian_descriptions()
