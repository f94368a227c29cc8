"""The kanji radical builder: its parser, renderer, labels and split without apt; the real
build end to end (slow, needs apt and the Debian mirror)."""

import importlib
import io
import json
import os
import shutil
import time

import numpy as np
import pytest

from kseq.data.sources import debian_packages
from kseq.data.sources.debian_packages import DebianPackageError
from kseq.data.datasets.kanji_radicals import (
    COPYRIGHT_FILES,
    KANJIDIC_FILE,
    kanji_radicals,
    radical_label,
    read_kanjidic,
    render_glyph,
    split_kanji,
)
from kseq.errors import KseqError

# The module itself: `kseq.data.datasets.kanji_radicals` is also the name of the function kseq.data exports.
module = importlib.import_module("kseq.data.datasets.kanji_radicals")

Image = pytest.importorskip("PIL.Image")

# Real KANJIDIC lines (readings and codes shortened): 夏 has Nelson's B1 and the classical C35;
# 阿 lists a second, miscounted stroke count; glosses hold spaces and capitals.
KANJIDIC = """# KANJIDIC JIS X 0208 Kanji Information File/Copyright EDRDG - 2016/2022-08-23/
亜 3021 U4e9c B1 C7 G8 S7 XJ05033 F1509 ア つ.ぐ T1 や {Asia} {rank next} {come after} {-ous} 
夏 3246 U590f B1 C35 G2 S10 XJ13864 F659 N58 カ ガ ゲ なつ {summer}
阿 3024 U963f B170 G9 S8 S9 XN5008 F1126 Ya1 ア オ おもね.る {Africa} {fawn upon}

水 3F65 U6c34 B85 G1 S4 F223 スイ みず {water} {Wednesday}
"""


def test_read_kanjidic_reads_classical_or_nelson_radicals_strokes_and_glosses():
    assert read_kanjidic(KANJIDIC) == [
        ("亜", 7, 7, ("Asia", "rank next", "come after", "-ous")),
        ("夏", 35, 10, ("summer",)),
        ("阿", 170, 8, ("Africa", "fawn upon")),
        ("水", 85, 4, ("water", "Wednesday")),
    ]
    assert [radical for _, radical, _, _ in read_kanjidic(KANJIDIC, "nelson")] == [1, 1, 170, 85]
    assert read_kanjidic(KANJIDIC.replace("\n", "\r\n"))[1] == ("夏", 35, 10, ("summer",))


def test_read_kanjidic_names_a_bad_line():
    with pytest.raises(KseqError, match=r"line 2 .*Received: '水 3F65 S4 \{water\}'"):
        read_kanjidic("# header\n水 3F65 S4 {water}\n")  # no B<radical>
    with pytest.raises(KseqError, match="radicals"):
        read_kanjidic(KANJIDIC, radicals="kangxi")


def test_labels_pad_the_number_and_show_the_ordinary_ideograph():
    assert [radical_label(n) for n in (1, 9, 85, 140, 214)] == [
        "001 一", "009 人", "085 水", "140 艸", "214 龠"]
    with pytest.raises(KseqError, match="Received: number=215"):
        radical_label(215)


def _pixels(png):
    """The `(H, W)` grey pixels of a PNG."""
    return np.asarray(Image.open(io.BytesIO(png)).convert("L"))


def test_render_glyph_draws_dark_ink_centred_on_white_the_same_bytes_each_time():
    png = render_glyph("H", None, 40)  # Pillow's own font: no system font needed
    assert png == render_glyph("H", None, 40)
    pixels = _pixels(png)
    assert pixels.shape == (40, 40)
    assert pixels[[0, -1]].min() == pixels[:, [0, -1]].min() == 255  # a white border
    assert pixels[12:28, 12:28].min() < 100  # dark ink in the middle
    rows, cols = np.nonzero(pixels < 255)  # the ink's box is centred
    assert abs(rows.min() + rows.max() + 1 - 40) <= 1 and abs(cols.min() + cols.max() + 1 - 40) <= 1
    assert _pixels(render_glyph(" ", None, 24)).min() == 255  # a blank glyph stays white


def test_split_is_stratified_deterministic_disjoint_and_trains_every_class():
    sizes = {1: 1, 2: 3, 3: 10, 4: 25, 5: 50}  # radical -> kanji
    pairs = [(chr(0x4E00 + 100 * radical + i), radical_label(radical))
             for radical, n in sizes.items() for i in range(n)]
    splits = split_kanji(pairs, seed=3)
    assert splits == split_kanji(list(reversed(pairs)), seed=3)
    assert splits != split_kanji(pairs, seed=4)
    kanji = [k for name in ("train", "valid", "test") for k, _ in splits[name]]
    assert sorted(kanji) == sorted(k for k, _ in pairs)  # disjoint, nothing lost
    for radical, n in sizes.items():
        label = radical_label(radical)
        count = {name: sum(lab == label for _, lab in splits[name]) for name in splits}
        assert count["test"] == count["valid"] == int(n * 0.1 + 0.5)
        assert count["train"] == n - 2 * count["test"] >= 1


def _fake_tree(root):
    """KANJIDIC (EUC-JP), an empty font file and the copyright files, as if unpacked."""
    for path in (KANJIDIC_FILE, module.FONT_FILE, *COPYRIGHT_FILES):
        os.makedirs(root / os.path.dirname(path), exist_ok=True)
        (root / path).write_bytes(b"License: fixture\n")
    (root / KANJIDIC_FILE).write_bytes(KANJIDIC.encode("euc_jp"))
    (root / ".unpacked").write_text("kanjidic_2022.08.23_all.deb\n"
                                    "fonts-ipafont-gothic_00303-23_all.deb\n")


def test_builder_caches_images_rows_notice_and_report(tmp_path, monkeypatch):
    _fake_tree(tmp_path / "tree")
    monkeypatch.setattr(module, "unpacked_packages", lambda names, name, progress: str(
        tmp_path / "tree"))
    drawn = []

    def fake_render(char, font_path, image_size):  # 水 is "missing from the font"
        drawn.append(char)
        return b"no glyph" if char in "\U0010fffd水" else f"png of {char}".encode()

    monkeypatch.setattr(module, "render_glyph", fake_render)
    splits = kanji_radicals(image_size=16, cache_dir=str(tmp_path / "cache"))
    assert sorted(splits["train"]) == sorted([("png of 亜".encode(), "007 二"),
                                              ("png of 夏".encode(), "035 夊"),
                                              ("png of 阿".encode(), "170 阜")])
    [folder] = (tmp_path / "cache").iterdir()
    report = json.loads((folder / "report.json").read_text())
    assert report["glyphs"] == 3 and report["kanji_in_kanjidic"] == 4
    assert report["undrawable_kanji"] == ["水"] and report["classes"] == 3
    assert report["packages"] == {"kanjidic": "2022.08.23", "fonts-ipafont-gothic": "00303-23"}
    assert "CC BY-SA 3.0" in report["licences"]["kanjidic"]
    assert "Attribution-ShareAlike 3.0" in (folder / "NOTICE.txt").read_text()
    assert (folder / "COPYRIGHT.kanjidic").read_text() == "License: fixture\n"
    rows = json.loads((folder / "rows.json").read_text())
    assert rows[0]["meanings"] == ["Asia", "rank next", "come after", "-ous"]
    drawn.clear()
    assert kanji_radicals(image_size=16, cache_dir=str(tmp_path / "cache")) == splits
    assert drawn == []  # the second call read the cache


APT = shutil.which("apt-get") and shutil.which("dpkg-deb")


@pytest.mark.slow
@pytest.mark.skipif(not APT, reason="apt-get / dpkg-deb not on this machine")
def test_real_build_has_6355_kanji_in_214_classes_and_a_fast_second_call(tmp_path, monkeypatch):
    if not debian_packages.apt_lists_present():
        pytest.skip("no apt package lists here (apt-get update needs root and the mirror)")
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    try:
        splits = kanji_radicals(image_size=32)
    except DebianPackageError as error:
        pytest.skip(f"the Debian mirror is not reachable here: {error}")
    every = [pair for name in ("train", "valid", "test") for pair in splits[name]]
    assert len(every) == 6355
    assert len({label for _, label in every}) == 214
    assert {label for _, label in every} == {label for _, label in splits["train"]}
    [folder] = (tmp_path / "kanji_radicals").iterdir()
    report = json.loads((folder / "report.json").read_text())
    assert report["glyphs"] == 6355 and report["undrawable_kanji"] == []
    assert report["majority_class_seed0"] == "075 木"
    assert 0.04 < report["majority_share_test_seed0"] < 0.07
    assert set(report["packages"]) == {"kanjidic", "fonts-ipafont-gothic"}
    pixels = _pixels(splits["test"][0][0])
    assert pixels.shape == (32, 32) and pixels.min() < 64
    started = time.monotonic()
    assert kanji_radicals(image_size=32) == splits
    assert time.monotonic() - started < 2
    # Nelson's radicals (KANJIDIC's B field alone): 213 classes, none for 35 夊.
    tree = tmp_path / "debian" / "kanji_radicals"
    nelson = read_kanjidic((tree / KANJIDIC_FILE).read_bytes().decode("euc_jp"), "nelson")
    assert len({radical for _, radical, _, _ in nelson}) == 213
    assert 35 not in {radical for _, radical, _, _ in nelson}
