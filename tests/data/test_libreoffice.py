"""The libreoffice builder on a small tree made here, and its apt path where apt works."""

import json
import os
import shutil
import struct

import pytest

from kseq import zoo
from kseq.data.datasets import libreoffice_packages
from kseq.data.sources import debian_packages
from kseq.data.datasets.help_paragraphs import read_help_page
from kseq.data.datasets.libreoffice import (
    build_from_tree,
    clean_and_split,
    held_out_bucket,
    libreoffice_dataset,
)
from kseq.data.datasets.libreoffice_packages import LibreOfficeDataError

PAGE = """<!DOCTYPE html><html lang="{lang}"><body>
<h1 id="hd_id1" dir="auto">{title}</h1>
<p id="par_id2" class="paragraph">{first} <a href="x.html">{link}</a>{rest}</p>
<p id="par_id3" class="paragraph">{same}</p>
<p class="paragraph">no id, not aligned</p>
<div id="par_id4"><div>nested <div>twice</div></div> {div}</div>
</body></html>"""

ENGLISH = dict(lang="en-US", title="Insert a new table", first="Click the", link="Table",
               rest=" icon  on the\n toolbar.", same="Select the cells you want.",
               div="and then again")
FRENCH = dict(lang="fr", title="Insérer un nouveau tableau", first="Cliquez sur l'icône",
              link="Tableau", rest=" de la barre d'outils.", same="Sélectionnez les cellules.",
              div="et encore")


def write_mo(path, pairs):
    """A little-endian gettext catalog with `pairs` (sorted, as msgfmt writes them)."""
    pairs = sorted((k.encode(), v.encode()) for k, v in pairs)
    header = 7 * 4
    originals, translations = header, header + 8 * len(pairs)
    data_start = translations + 8 * len(pairs)
    table_o, table_t, blob = b"", b"", b""
    for key, _ in pairs:
        table_o += struct.pack("<2I", len(key), data_start + len(blob))
        blob += key + b"\0"
    for _, value in pairs:
        table_t += struct.pack("<2I", len(value), data_start + len(blob))
        blob += value + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, len(pairs), originals, translations, 0, 0)
    with open(path, "wb") as handle:
        handle.write(head + table_o + table_t + blob)


def make_tree(root):
    help_root = os.path.join(root, "usr/share/libreoffice/help")
    for lang, fields in (("en-US", ENGLISH), ("fr", FRENCH)):
        os.makedirs(os.path.join(help_root, lang, "text"))
        with open(os.path.join(help_root, lang, "text/a.html"), "w", encoding="utf-8") as f:
            f.write(PAGE.format(**fields))
    # Only in English: skipped (no aligned page). Binary junk: skipped as unreadable.
    with open(os.path.join(help_root, "en-US/text/only_english.html"), "w") as handle:
        handle.write(PAGE.format(**ENGLISH))
    with open(os.path.join(help_root, "en-US/text/broken.html"), "wb") as handle:
        handle.write(b"\xff\xfe\x00garbage")
    catalogs = os.path.join(root, "usr/lib/libreoffice/program/resource/fr/LC_MESSAGES")
    os.makedirs(catalogs)
    write_mo(os.path.join(catalogs, "a.mo"), [
        ("~Save the document", "~Enregistrer le document"),
        ("Select the cells you want.", "doublon venu de l'interface"),  # help wins
        ("OK", "OK"),  # too short and a copy
    ])
    with open(os.path.join(catalogs, "b.mo"), "wb") as handle:
        handle.write(b"not a catalog at all")
    os.makedirs(os.path.join(root, "usr/share/doc/libreoffice-help-fr"))
    with open(os.path.join(root, "usr/share/doc/libreoffice-help-fr/copyright"), "w") as handle:
        handle.write("License: MPL-2.0\n")


def test_help_page_paragraphs_flatten_links_and_nesting(tmp_path):
    make_tree(str(tmp_path))
    page = read_help_page(str(tmp_path / "usr/share/libreoffice/help/en-US/text/a.html"))
    assert page == {"hd_id1": "Insert a new table",
                    "par_id2": "Click the Table icon on the toolbar.",
                    "par_id3": "Select the cells you want.",
                    "par_id4": "nested twice and then again"}
    with pytest.raises(ValueError, match="broken.html"):
        read_help_page(str(tmp_path / "usr/share/libreoffice/help/en-US/text/broken.html"))


def test_build_from_tree_aligns_filters_deduplicates_and_counts_skips(tmp_path):
    make_tree(str(tmp_path))
    splits, report = build_from_tree(str(tmp_path), "fr", held_out_percent=100,
                                     progress=lambda message: None)
    every = splits["train"] + splits["valid"] + splits["test"]
    assert sorted(every) == sorted([
        ("Insert a new table", "Insérer un nouveau tableau"),
        ("Click the Table icon on the toolbar.", "Cliquez sur l'icône Tableau de la barre d'outils."),
        ("Select the cells you want.", "Sélectionnez les cellules."),
        ("nested twice and then again", "nested twice et encore"),
        ("Save the document", "Enregistrer le document"),
    ])
    # Everything is held out at 100 %: help paragraphs of 4-40 words are test, the rest valid.
    assert ("Save the document", "Enregistrer le document") in splits["valid"]
    assert ("Insert a new table", "Insérer un nouveau tableau") in splits["test"]
    assert report["help_pages_skipped"] == 2  # only_english.html and broken.html
    assert report["catalogs_skipped"] == 1
    assert report["duplicates_removed"] == 1
    assert report["filtered_by_length_or_copy"] == 1
    assert report["overlap_test_train_sources"] == 0


def test_split_is_by_hash_of_english_and_peer_test_never_trains():
    pairs = [(f"open the file number {i} now", f"ouvrez le fichier {i}") for i in range(600)]
    splits, report = clean_and_split(pairs, [], held_out_percent=6)
    for english, _ in splits["train"]:
        assert held_out_bucket(english) >= 6
    for english, _ in splits["peer_test"]:
        assert held_out_bucket(english) < 2
    assert report["overlap_peer_test_train_sources"] == 0
    assert sum(report["sizes"][n] for n in ("train", "valid", "test")) == 600
    again, _ = clean_and_split(list(reversed(pairs)), [], held_out_percent=6)
    assert sorted(again["test"]) == sorted(splits["test"])


def test_dataset_caches_splits_notice_and_report(tmp_path):
    folder = tmp_path / "cache"
    make_tree(str(folder / "root"))
    (folder / "root" / ".unpacked").write_text("fixture\n")
    splits = libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(folder))
    written = folder / "v1-held50"
    report = json.loads((written / "report.json").read_text())
    assert report["sizes"]["train"] == len(splits["train"])
    assert "Mozilla Public License 2.0" in (written / "NOTICE.txt").read_text()
    assert "License: MPL-2.0" in (written / "NOTICE.txt").read_text()
    shutil.rmtree(folder / "root")  # the second call reads the cache only
    assert libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(folder)) == splits
    assert "libreoffice" in zoo.DATA_BUILDERS


def test_unknown_language_and_missing_apt_give_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="'fr', 'de', 'es'.*Received: target_language='xx'"):
        libreoffice_dataset("xx", cache_dir=str(tmp_path))
    monkeypatch.setattr(debian_packages.shutil, "which", lambda tool: None)
    with pytest.raises(LibreOfficeDataError, match="apt-get"):
        libreoffice_packages.fetch_and_unpack("fr", str(tmp_path))


APT = shutil.which("apt-get") and shutil.which("dpkg-deb")


@pytest.mark.slow
@pytest.mark.skipif(not APT, reason="apt-get / dpkg-deb not on this machine")
def test_apt_path_lists_offered_languages_and_unpacks_french(tmp_path):
    if not debian_packages.apt_lists_present():
        pytest.skip("no apt package lists here (apt-get update needs root and the mirror)")
    offered = libreoffice_packages.offered_languages()
    assert {"fr", "de", "es"} <= set(offered)
    with pytest.raises(LibreOfficeDataError, match="offered: .*fr"):
        libreoffice_packages.fetch_and_unpack("xx-nowhere", str(tmp_path / "xx"))
    try:
        root = libreoffice_packages.fetch_and_unpack("fr", str(tmp_path / "fr"))
    except LibreOfficeDataError as error:
        pytest.skip(f"the Debian mirror is not reachable here: {error}")
    help_root = os.path.join(root, "usr/share/libreoffice/help")
    page = "en-US/text/shared/autokorr/06000000.html"
    english = read_help_page(os.path.join(help_root, page))
    french = read_help_page(os.path.join(help_root, page.replace("en-US", "fr")))
    assert english["hd_id3148932"] == "AutoCorrect has been activated"
    assert set(english) == set(french)
