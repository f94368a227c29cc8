"""The Tux Paint builder on a fake stamp tree made here; the real package in one slow test.

The fake tree has the package's layout (`usr/share/tuxpaint/stamps/<category>/...`)
with tiny PNGs (RGBA, grey + alpha, palette), a `_mirror.png` that is no stamp,
an SVG-only stamp, a text without an image, captions shared by two stamps and
translations some stamps lack. `unpacked_packages` returns it, so no apt is needed.
"""

import importlib
import io
import json
import os
import shutil

import pytest
from PIL import Image

from kseq.data.sources.debian_packages import DebianPackageError, apt_lists_present
from kseq.data.datasets.svg_rendering import expand_internal_entities, svg_renderer
from kseq.data.datasets.tuxpaint_captions import parse_stamp_text, tuxpaint_captions, tuxpaint_languages
from kseq.errors import KseqError

# `kseq.data.datasets.tuxpaint_captions` is also the function's name in `kseq.data`: fetch the module.
module = importlib.import_module("kseq.data.datasets.tuxpaint_captions")

SVG = (b'<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY ns_svg "http://www.w3.org/2000/svg">]>'
       b'<svg xmlns="&ns_svg;" width="20" height="10"><rect x="2" y="2" width="16" height="6" '
       b'fill="#c03020"/></svg>')


@pytest.mark.parametrize("text, parsed", [
    ("A cat.\nfr.utf8=Un chat.\nde.utf8=Eine Katze.\n",
     ("A cat.", {"fr": "Un chat.", "de": "Eine Katze."})),
    ("\ufeffA cat.\r\npt_BR.utf8= Um  gato. \r\n", ("A cat.", {"pt_BR": "Um gato."})),  # BOM, CRLF
    ("A cat.\nsr@latin.utf8=Mačka.\nca@valencia.utf8=Un gat.\n",
     ("A cat.", {"sr@latin": "Mačka.", "ca@valencia": "Un gat."})),
    ("A cat.\nfr.utf8=\nfr.utf8=Un chat.\nes.utf8=Un gato.\nes.utf8=Otro.\n",
     ("A cat.", {"fr": "Un chat.", "es": "Un gato."})),  # empty dropped, first one wins
    ("fr.utf8=Un chat.\n", ("", {})),  # no English line
    ("", ("", {})),
])
def test_parse_stamp_text(text, parsed):
    assert parse_stamp_text(text) == parsed


def test_expand_internal_entities_keeps_other_documents():
    assert b"<!DOCTYPE" not in expand_internal_entities(SVG)
    assert b'xmlns="http://www.w3.org/2000/svg"' in expand_internal_entities(SVG)
    plain = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    assert expand_internal_entities(plain) == plain


def _png(path, mode, size):
    colour = {"RGBA": (30, 90, 200, 255), "LA": (80, 255)}.get(mode)
    image = Image.new("RGBA" if mode == "P" else mode, size, (0,) * len(colour or (0, 0, 0, 0)))
    if mode == "P":
        image.paste((200, 40, 40, 255), (1, 1, size[0] - 1, size[1] - 1))
        image = image.convert("P")  # palette + transparency
    else:
        image.paste(colour, (1, 1, size[0] - 1, size[1] - 1))
    image.save(path)


def _stamp(root, stem, english, translations=(), image="RGBA", size=(12, 8)):
    path = root / stem
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [english] + [f"{locale}.utf8={text}" for locale, text in translations]
    (root / f"{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if image == "svg":
        (root / f"{stem}.svg").write_bytes(SVG)
    elif image:
        _png(root / f"{stem}.png", image, size)


@pytest.fixture
def fake_stamps(tmp_path, monkeypatch):
    """A fake unpacked package; returns the list of `unpacked_packages` calls."""
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    tree = tmp_path / "tree"
    root = tree / "usr/share/tuxpaint/stamps"
    _stamp(root, "animals/cat", "A cat.", [("fr", "Un chat."), ("de", "Eine Katze.")])
    _stamp(root, "animals/birds/owl", "An owl.", [("fr", "Une chouette.")], image="LA",
           size=(6, 20))
    _stamp(root, "food/apple", "An apple.", [("fr", "Une pomme.")], image="svg")
    _stamp(root, "food/pear", "A pear.", [("fr", "Une poire.")], image=None)  # no image
    _stamp(root, "vehicles/car", "A car.", [("fr", "Une voiture.")], image="P")
    _png(root / "vehicles/car_mirror.png", "RGBA", (12, 8))  # a mirrored image, no stamp
    for i in range(40):  # enough captions for all three splits; pairs share a caption
        _stamp(root, f"symbols/letter{i:02d}", f"The letter number {i // 2}.",
               [("fr", f"La lettre {i // 2}.")] if i % 3 else [])
    (tree / "usr/share/doc/tuxpaint-stamps-default").mkdir(parents=True)
    (tree / "usr/share/doc/tuxpaint-stamps-default/copyright").write_text("License: GPL-2\n")
    (tree / ".unpacked").write_text("tuxpaint-stamps-default_2022.06.04-1_all.deb\n")
    calls = []

    def unpacked(names, cache_name, progress):
        calls.append(names)
        return str(tree)

    monkeypatch.setattr(module, "unpacked_packages", unpacked)
    return calls


def test_splits_keep_captions_apart_and_languages_share_them(tmp_path, fake_stamps):
    english = tuxpaint_captions("en", image_size=16, with_categories=True)
    assert set(english) == {"train", "valid", "test"}
    captions = {name: {caption for _, caption, _ in rows} for name, rows in english.items()}
    assert all(captions.values())
    assert not (captions["train"] & captions["test"] or captions["train"] & captions["valid"]
                or captions["valid"] & captions["test"])
    everything = [row for rows in english.values() for row in rows]
    svg = svg_renderer() is not None
    assert len(everything) == 43 + svg  # 40 letters, cat, owl, car (+ the SVG apple)
    categories = {caption: category for _, caption, category in everything}
    assert categories["A cat."] == categories["An owl."] == "animals"
    assert categories["A car."] == "vehicles" and categories["The letter number 3."] == "symbols"
    for png, _, _ in everything:
        image = Image.open(io.BytesIO(png))
        assert image.size == (16, 16) and image.mode == "RGBA"
        assert image.getpixel((0, 0))[3] == 0  # transparent margins kept
    french = tuxpaint_captions("fr", image_size=16)
    assert sum(len(rows) for rows in french.values()) == 26 + 3 + svg  # letters i % 3 != 0
    # Every language has the English split: letter k is where "The letter number k." is.
    english_split = {caption: name for name, rows in english.items() for _, caption, _ in rows}
    french_split = {caption: name for name, rows in french.items() for _, caption in rows}
    assert {french_split[f"La lettre {k}."] == english_split[f"The letter number {k}."]
            for k in range(20)} == {True}
    assert tuxpaint_captions("en", image_size=16, with_categories=True) == english
    assert tuxpaint_captions("en", image_size=16, seed=3) != tuxpaint_captions("en", image_size=16)


def test_report_counts_and_cache(tmp_path, fake_stamps, monkeypatch):
    tuxpaint_captions("en", image_size=16)
    home = tmp_path / "home" / "tuxpaint_captions"
    (folder,) = os.listdir(home)  # one published set, no temporary folder beside it
    svg = svg_renderer() is not None
    assert folder == f"stamps-16px-{'svg' if svg else 'nosvg'}-f1"
    report = json.loads((home / folder / "report.json").read_text())
    assert report["counts"] == {
        "stamps": 44, "images": 43 + svg, "png": 43, "svg": int(svg), "svg_only": 1,
        "svg_skipped": int(not svg), "unreadable": 0, "unique_english": 23 + svg,
        "texts_skipped": {"no_image": 1}}
    assert report["categories"] == {"animals": 2, **({"food": 1} if svg else {}),
                                    "symbols": 40, "vehicles": 1}
    assert list(report["languages"])[:3] == ["en", "fr", "de"]
    assert report["source"]["version"] == "2022.06.04-1" and "GPL-2" in report["licence"]
    assert (home / folder / "COPYRIGHT.debian").is_file()

    def fail(*args):
        raise AssertionError("the cached set was rendered again")

    monkeypatch.setattr(module, "stamp_png", fail)
    german = tuxpaint_captions("de", image_size=16)  # only the cat has German
    assert [caption for rows in german.values() for _, caption in rows] == ["Eine Katze."]
    assert tuxpaint_languages() == {"en": 44, "fr": 30, "de": 1}


def test_errors_name_what_is_missing(tmp_path, fake_stamps, monkeypatch):
    with pytest.raises(KseqError, match=r"locales \['en', 'fr', 'de'\]. Received: lang='xx'"):
        tuxpaint_captions("xx", image_size=16)
    with pytest.raises(KseqError, match="image_size"):
        tuxpaint_captions("en", image_size=8)
    with pytest.raises(KseqError, match="with_categories"):
        tuxpaint_captions("en", image_size=16, with_categories="yes")

    def no_apt(names, cache_name, progress):
        raise DebianPackageError("needs apt-get, dpkg-deb; this machine lacks apt-get")

    monkeypatch.setattr(module, "unpacked_packages", no_apt)
    with pytest.raises(DebianPackageError, match="lacks apt-get"):
        tuxpaint_captions("en", image_size=16, cache_dir=str(tmp_path / "sets"))
    assert os.listdir(tmp_path / "sets") == []


def test_without_cairosvg_svg_stamps_are_skipped_and_counted(tmp_path, fake_stamps, monkeypatch):
    monkeypatch.setattr(module, "svg_renderer", lambda: None)
    monkeypatch.setattr(module, "svg_renderer_version", lambda: None)
    splits = tuxpaint_captions("en", image_size=16)
    assert "An apple." not in {caption for rows in splits.values() for _, caption in rows}
    (folder,) = os.listdir(tmp_path / "home" / "tuxpaint_captions")
    report = json.loads((tmp_path / "home/tuxpaint_captions" / folder / "report.json").read_text())
    assert folder.endswith("-nosvg-f1") and report["counts"]["svg_skipped"] == 1


APT = shutil.which("apt-get") and shutil.which("dpkg-deb")


@pytest.mark.slow
@pytest.mark.skipif(not APT, reason="apt-get / dpkg-deb not on this machine")
def test_real_builder_counts():
    if not apt_lists_present():
        pytest.skip("no apt package lists here")
    try:
        splits = tuxpaint_captions("en", with_categories=True)  # default cache: once a machine
    except DebianPackageError as error:
        pytest.skip(f"the Debian mirror is not reachable here: {error}")
    rows = [row for name in ("train", "valid", "test") for row in splits[name]]
    svg = svg_renderer() is not None
    assert len(rows) == 785 + 165 * svg  # tuxpaint-stamps-default 2022.06.04
    if svg:
        assert len({caption for _, caption, _ in rows}) == 804
    assert len({category for _, _, category in rows}) == 16
    test = {caption for _, caption, _ in splits["test"]}
    assert not test & {caption for _, caption, _ in splits["train"]}
    languages = tuxpaint_languages()
    assert languages["en"] == 950 and sum(count >= 900 for count in languages.values()) >= 57
    french = tuxpaint_captions("fr")
    assert sum(len(french[name]) for name in ("train", "valid", "test")) == len(rows)
