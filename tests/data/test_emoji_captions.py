"""The emoji captions builder: names, bases, splits, and the cache on a stand-in renderer.

The fast tests never touch apt or the font: `unpacked_packages` returns a
folder made here and `render_emoji` draws a flat square (or nothing, for the
emoji the "font" lacks). One slow test runs the real builder.
"""

import importlib
import io
import json
import os
import shutil
import sys

import pytest
from PIL import Image, ImageFont

from kseq.data.sources.debian_packages import DebianPackageError, apt_lists_present
from kseq.data.datasets.emoji_captions import (
    base_of,
    caption_of_name,
    emoji_captions,
    emoji_languages,
    emoji_names,
    emoji_splits,
    repeated_by_base,
)
from kseq.data.datasets.emoji_rendering import render_glyph
from kseq.errors import KseqError

# `kseq.data.datasets.emoji_captions` is also the function's name in `kseq.data`: fetch the module.
module = importlib.import_module("kseq.data.datasets.emoji_captions")

THUMBS, MEDIUM, DARK = "\U0001F44D", "\U0001F3FD", "\U0001F3FF"
WOMAN, MAN, PERSON = "\U0001F469", "\U0001F468", "\U0001F9D1"
GIRL, CHILD = "\U0001F467", "\U0001F9D2"
ROCKET, RUNNER, ZWJ, VS16 = "\U0001F680", "\U0001F3C3", "\u200d", "\ufe0f"
FEMALE, MALE, RIGHT = "\u2640", "\u2642", "\u27a1"


@pytest.mark.parametrize("name, caption", [
    (":grinning_face:", "grinning face"),
    (":thumbs_up_medium-dark_skin_tone:", "thumbs up medium-dark skin tone"),
    (":France:", "France"),  # case kept
    (":keycap_#:", "keycap #"),
    (":médaille_d’or:", "médaille d’or"),
    (":サムズアップ_中間の肌色:", "サムズアップ 中間の肌色"),
    ("no_colons", "no colons"),
    (":a__b :", "a b"),  # runs of spaces collapse
    ("e\u0301", "\u00e9"),  # NFC
])
def test_caption_of_name(name, caption):
    assert caption_of_name(name) == caption


@pytest.mark.parametrize("sequence, base", [
    (THUMBS + MEDIUM, THUMBS),  # skin tone
    (WOMAN + MEDIUM + ZWJ + ROCKET, PERSON + ZWJ + ROCKET),  # tone and gender
    (RUNNER + ZWJ + FEMALE + VS16, RUNNER),  # gender sign after a ZWJ
    (RUNNER + DARK + ZWJ + MALE + VS16 + ZWJ + RIGHT + VS16, RUNNER),  # and facing right
    (FEMALE + VS16, FEMALE),  # the female sign itself is its own base
    (MAN + ZWJ + WOMAN + ZWJ + GIRL, PERSON + ZWJ + PERSON + ZWJ + CHILD),  # a family
    ("\U0001F1EB\U0001F1F7", "\U0001F1EB\U0001F1F7"),  # a flag is unchanged
    ("\U0001F3F3" + VS16 + ZWJ + "\u26a7" + VS16, "\U0001F3F3" + ZWJ + "\u26a7"),  # not gender
])
def test_base_of(sequence, base):
    assert base_of(sequence) == base


def test_repeated_by_base_weighs_each_base_alike():
    dog, cat = "\U0001F436", "\U0001F431"
    thumbs = [THUMBS, THUMBS + MEDIUM, THUMBS + DARK]  # one base, three variants
    assert repeated_by_base([dog] + thumbs + [cat], 0) == [dog] + thumbs + [cat]
    assert repeated_by_base([dog] + thumbs + [cat], 3) == [dog] * 3 + thumbs + [cat] * 3
    # ceil(4 / 3) = 2 repeats of each variant: the base contributes 6, a lone emoji 4
    assert repeated_by_base(thumbs + [dog], 4) == [t for t in thumbs for _ in "ab"] + [dog] * 4
    with pytest.raises(KseqError, match="balance_bases.*Received: balance_bases=-1"):
        repeated_by_base(thumbs, -1)


def test_splits_of_the_real_names_are_disjoint_deterministic_and_subsets_right():
    sequences = list(emoji_names())
    splits = emoji_splits(sequences)
    parts = [set(splits[name]) for name in ("train", "valid", "test")]
    assert sum(map(len, parts)) == len(sequences) == len(set().union(*parts))
    assert 0.15 < len(parts[2]) / len(sequences) < 0.25
    assert emoji_splits(sequences) == splits
    assert emoji_splits(sequences, seed=1)["test"] != splits["test"]
    assert sorted(splits["test_seen_base"] + splits["test_unseen_base"]) == sorted(parts[2])
    trained = {base_of(sequence) for sequence in parts[0]}
    assert all(base_of(sequence) in trained for sequence in splits["test_seen_base"])
    assert not any(base_of(sequence) in trained for sequence in splits["test_unseen_base"])
    assert splits["test_seen_base"] and splits["test_unseen_base"]


def test_names_cover_fourteen_languages():
    names = emoji_names()
    assert len(emoji_languages()) == 14 and "en" in emoji_languages()
    assert names[THUMBS + MEDIUM]["en"] == ":thumbs_up_medium_skin_tone:"
    assert all(set(by_language) == set(emoji_languages()) for by_language in names.values())


def test_render_glyph_keeps_alpha_and_refuses_two_glyphs():
    font = ImageFont.load_default(40)
    png = render_glyph(font, "W", 32, advance=font.getlength("W"))
    image = Image.open(io.BytesIO(png))
    assert image.size == (32, 32) and image.mode == "RGBA"
    assert image.getpixel((0, 0))[3] == 0 and image.getchannel("A").getextrema() == (0, 255)
    assert render_glyph(font, "WW", 32, advance=font.getlength("W")) is None
    assert render_glyph(font, " ", 32, advance=font.getlength(" ")) is None  # no ink


FAKE_NAMES = {
    THUMBS: {"en": ":thumbs_up:", "fr": ":pouce_vers_le_haut:"},
    THUMBS + MEDIUM: {"en": ":thumbs_up_medium_skin_tone:", "fr": ":pouce_peau_mate:"},
    THUMBS + DARK: {"en": ":thumbs_up_dark_skin_tone:"},  # no French name
    ROCKET: {"en": ":rocket:", "fr": ":fusée:"},
    "\U0001FAE9": {"en": ":face_with_bags_under_eyes:"},  # newer than the font
}
MISSING = "\U0001FAE9"


@pytest.fixture
def fake_font(tmp_path, monkeypatch):
    """The builder on FAKE_NAMES, a fake unpacked package and a flat-square renderer."""
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    tree = tmp_path / "tree"
    (tree / "usr/share/doc/fonts-noto-color-emoji").mkdir(parents=True)
    (tree / "usr/share/doc/fonts-noto-color-emoji/copyright").write_text("Apache-2.0 / OFL\n")
    (tree / "usr/share/fonts/truetype/noto").mkdir(parents=True)
    (tree / "usr/share/fonts/truetype/noto/NotoColorEmoji.ttf").write_bytes(b"not a font")
    (tree / ".unpacked").write_text("fonts-noto-color-emoji_2.042-0+deb12u1_all.deb\n")
    calls = []

    def render(font, sequence, image_size):
        calls.append(sequence)
        if sequence == MISSING:
            return None
        image = Image.new("RGBA", (image_size, image_size), (0, 0, 0, 0))
        image.paste((200, len(sequence) * 40, 0, 255), (4, 4, image_size - 4, image_size - 4))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    monkeypatch.setattr(module, "emoji_names", lambda: dict(FAKE_NAMES))
    monkeypatch.setattr(module, "unpacked_packages", lambda names, cache_name, progress: str(tree))
    monkeypatch.setattr(module, "load_emoji_font", lambda path: object())
    monkeypatch.setattr(module, "render_emoji", render)
    return calls


def test_builder_caches_skips_and_reports(tmp_path, fake_font):
    splits = emoji_captions("en", image_size=24)
    assert set(splits) == {"train", "valid", "test", "test_seen_base", "test_unseen_base"}
    pairs = splits["train"] + splits["valid"] + splits["test"]
    assert sorted(caption for _, caption in pairs) == [
        "rocket", "thumbs up", "thumbs up dark skin tone", "thumbs up medium skin tone"]
    assert all(Image.open(io.BytesIO(png)).size == (24, 24) for png, _ in pairs)
    assert sorted(splits["test_seen_base"] + splits["test_unseen_base"]) == sorted(splits["test"])
    home = tmp_path / "home" / "emoji_captions"
    (folder,) = os.listdir(home)  # no temporary folder left beside it
    report = json.loads((home / folder / "report.json").read_text())
    assert report["counts"] == {"emoji": 5, "rendered": 4, "skipped": 1}
    assert report["skipped"] == [":face_with_bags_under_eyes:"]
    assert report["languages"] == {"en": 4, "fr": 3}
    assert report["source"]["version"] == "2.042-0+deb12u1" and "OFL" in report["licence"]
    assert (home / folder / "COPYRIGHT.debian").is_file()
    rendered = len(fake_font)
    french = emoji_captions("fr", image_size=24)  # read from the cache: nothing rendered
    assert len(fake_font) == rendered
    assert sum(map(len, (french[n] for n in ("train", "valid", "test")))) == 3
    assert emoji_captions("en", image_size=24) == splits  # deterministic
    # Training holds the three thumbs (one base): ceil(4 / 3) = 2 of each; valid's rocket once.
    balanced = emoji_captions("en", image_size=24, balance_bases=4)
    assert [caption for _, caption in splits["train"]] == [
        "thumbs up", "thumbs up medium skin tone", "thumbs up dark skin tone"]
    assert balanced["train"] == [item for item in splits["train"] for _ in range(2)]
    assert {k: v for k, v in balanced.items() if k != "train"} == {
        k: v for k, v in splits.items() if k != "train"}  # valid and test never repeat


def test_errors_name_what_is_missing(tmp_path, monkeypatch, fake_font):
    with pytest.raises(KseqError, match="languages.*Received: lang='xx'"):
        emoji_captions("xx")
    with pytest.raises(KseqError, match="image_size"):
        emoji_captions("en", image_size=8)

    def no_apt(names, cache_name, progress):
        raise DebianPackageError("needs apt-get, dpkg-deb; this machine lacks apt-get")

    monkeypatch.setattr(module, "unpacked_packages", no_apt)
    with pytest.raises(DebianPackageError, match="lacks apt-get"):
        emoji_captions("en", image_size=24, cache_dir=str(tmp_path / "sets"))
    assert os.listdir(tmp_path / "sets") == []  # nothing half built is left
    monkeypatch.setitem(sys.modules, "emoji", None)  # import emoji -> ImportError
    with pytest.raises(KseqError, match="pip install 'emoji"):
        emoji_captions("en")


APT = shutil.which("apt-get") and shutil.which("dpkg-deb")


@pytest.mark.slow
@pytest.mark.skipif(not APT, reason="apt-get / dpkg-deb not on this machine")
def test_real_builder_counts():
    if not apt_lists_present():
        pytest.skip("no apt package lists here")
    try:
        splits = emoji_captions("en")  # the default cache: rendered once per machine
    except DebianPackageError as error:
        pytest.skip(f"the Debian mirror is not reachable here: {error}")
    sizes = {name: len(items) for name, items in splits.items()}
    total = sizes["train"] + sizes["valid"] + sizes["test"]
    assert 3700 <= total <= len(emoji_names())  # 3,789 with emoji 2.16 and Noto 2.042
    assert sizes["test_seen_base"] + sizes["test_unseen_base"] == sizes["test"]
    assert sizes["test_seen_base"] > sizes["test_unseen_base"] > 100
    captions = {caption for _, caption in splits["train"] + splits["test"]}
    assert {"grinning face", "thumbs up medium skin tone"} & captions
    image = Image.open(io.BytesIO(splits["test"][0][0]))
    assert image.size == (72, 72) and image.mode == "RGBA"
    assert emoji_captions("ja")["test"][0][0] == splits["test"][0][0]  # one split, all languages
