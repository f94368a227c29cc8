r"""The `tuxpaint_captions` task: Tux Paint stamps -> their one-sentence descriptions.

Source: the Debian package `tuxpaint-stamps-default` (161 MB `.deb`, fetched
with `apt-get download` + `dpkg-deb -x` into `$KSEQ_HOME/debian/`, never
installed). Under `usr/share/tuxpaint/stamps/<category>/.../` each stamp is
`<stem>.txt` with its image `<stem>.png` or, for some, only `<stem>.svg`
(`<stem>_mirror.png` and the sounds are not used). The text's first line is
the English caption ("The tender carries water and coal for the engine."),
and each `xx.utf8=...` line a translation, `xx` a locale such as `fr`,
`pt_BR` or `sr@latin` (`tuxpaint_languages()` lists them with counts).
Captions are NFC with runs of whitespace collapsed; an empty translation
counts as missing.

Images: square RGBA PNGs, the stamp scaled to fit (`image_size` its longest
side) and centred, transparent margins and alpha kept (many stamps are grey
+ alpha; `kseq.data.pipeline.image_decoding` composites them on white). A stamp with
a PNG uses it; an SVG-only one is drawn with `cairosvg` when it is installed
and finds libcairo (`kseq.data.datasets.svg_rendering`), else skipped and counted;
the cache folder's name says which (`-svg` / `-nosvg`).

Split: by a seeded hash of the English caption (`keyed_split`, about
70/10/20%), so stamps sharing a caption share a split, no test caption is
in training, and every language has the same split. A stamp without a
caption in `lang` is left out (counted on stderr).

Licence: GPL-2 (or later), Bill Kendrick and the Tux Paint contributors
(the Debian copyright file is copied into the cache as `COPYRIGHT.debian`).
The images are fetched at setup and never committed; no weights trained on
them are shipped.

Example:
>>> from kseq.data.datasets.tuxpaint_captions import parse_stamp_text
>>> parse_stamp_text("A penguin.\nfr.utf8=Un  manchot.\npt_BR.utf8=\n")
('A penguin.', {'fr': 'Un manchot.'})
"""

import collections
import os
import re
import shutil
import sys
import time
import unicodedata

from kseq.arguments import check_int
from kseq.data.sources.debian_packages import package_versions, unpacked_packages
from kseq.data.datasets.keyed_split import SPLITS, split_of
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.datasets.rendered_image_sets import (
    cached_image_set,
    fit_square,
    pillow,
    png_bytes,
    read_images,
    write_image,
)
from kseq.data.datasets.svg_rendering import render_svg, svg_renderer, svg_renderer_version
from kseq.errors import KseqError

PACKAGE = "tuxpaint-stamps-default"
STAMPS = "usr/share/tuxpaint/stamps"
COPYRIGHT = f"usr/share/doc/{PACKAGE}/copyright"
FORMAT = 1  # bump when rendering or rows change: older cached sets are rebuilt beside
DEFAULT_IMAGE_SIZE = 128
LICENCE = ("Tux Paint stamps (Debian tuxpaint-stamps-default): GPL-2 or later, Bill Kendrick "
           "and the Tux Paint contributors (see COPYRIGHT.debian beside this report). Fetched "
           "at setup, never committed; no weights trained on them are shipped.")
_TRANSLATION = re.compile(r"([A-Za-z]{2,3}(?:_[A-Za-z]{2})?(?:@[A-Za-z]+)?)\.utf8=(.*)")
_PROGRESS_EVERY = 200


def _progress(message):
    print(f"[tuxpaint] {message}", file=sys.stderr, flush=True)


def _clean(text):
    return " ".join(unicodedata.normalize("NFC", text).split())


def parse_stamp_text(text):
    """`(english, {locale: caption})` of a stamp's `.txt` (the first translation of a
    locale wins; empty ones are dropped)."""
    lines = text.lstrip("\ufeff").splitlines()
    english = _clean(lines[0]) if lines and not _TRANSLATION.fullmatch(lines[0].strip()) else ""
    captions = {}
    for line in lines[1:]:
        match = _TRANSLATION.fullmatch(line.strip())
        if match and _clean(match.group(2)):
            captions.setdefault(match.group(1), _clean(match.group(2)))
    return english, captions


def read_stamps(stamps_root):
    """`(stamps, skipped)`: a dict per stamp with a caption and an image, sorted by stem, and
    counts of `.txt` files left out (`no_image`, `no_english`, `not_utf8`).

    Each stamp: `stem` (path under `stamps_root`, no extension), `category`
    (its first folder), `english`, `captions` (locale -> text), `source`
    (`"png"` or `"svg"`: the PNG when both exist).
    """
    stamps, skipped = [], collections.Counter()
    for folder, subfolders, files in os.walk(stamps_root):
        subfolders.sort()
        for name in sorted(files):
            if not name.endswith(".txt"):
                continue
            base = os.path.join(folder, name[:-4])
            source = next((ext for ext in ("png", "svg") if os.path.isfile(f"{base}.{ext}")), None)
            try:
                with open(base + ".txt", encoding="utf-8") as handle:
                    english, captions = parse_stamp_text(handle.read())
            except UnicodeDecodeError:
                skipped["not_utf8"] += 1
                continue
            if source is None or not english:
                skipped["no_image" if source is None else "no_english"] += 1
                continue
            stem = os.path.relpath(base, stamps_root).replace(os.sep, "/")
            stamps.append({"stem": stem, "category": stem.split("/")[0] if "/" in stem else "",
                           "english": english, "captions": captions, "source": source})
    return sorted(stamps, key=lambda stamp: stamp["stem"]), dict(skipped)


def language_counts(stamps):
    """`{locale: stamps with a caption in it}`, `"en"` first, then by count and name."""
    counts = collections.Counter(locale for stamp in stamps for locale in stamp["captions"])
    counts["en"] = len(stamps)
    return dict(sorted(counts.items(), key=lambda item: (item[0] != "en", -item[1], item[0])))


def tuxpaint_languages():
    """`{locale: number of stamps captioned in it}` of the Tux Paint stamps (fetched once);
    `"en"` is the first line of every stamp's text, the rest its `xx.utf8=` lines."""
    stamps, _ = read_stamps(os.path.join(_stamp_tree(), STAMPS))
    return language_counts(stamps)


def tuxpaint_captions(lang="en", image_size=DEFAULT_IMAGE_SIZE, seed=0, cache_dir=None,
                      with_categories=False):
    """Tux Paint stamps and captions: `{"train", "valid", "test"}` -> lists of
    `(png_bytes, caption)`, or `(png_bytes, caption, category)` with `with_categories=True`.

    `category` is the stamp's folder under `stamps/` (`"animals"`, `"vehicles"`,
    ...: 16 of them), for scores per category. The first call fetches the
    package and renders every stamp once into
    `<cache_dir>/stamps-<size>px-<svg|nosvg>-f<format>/` with `report.json`
    (counts, skips, languages, categories, licence); later calls read it.

    Args:
        lang: `"en"` or a locale of `tuxpaint_languages()` (`"fr"`, `"pt_BR"`, ...).
        image_size: the side of the square images in pixels, 16-512.
        seed: an integer >= 0 salting the split hash; 0 gives the default split.
        cache_dir: where rendered sets are kept; default `$KSEQ_HOME/tuxpaint_captions`.
        with_categories: add each stamp's category as a third element.

    Raises `KseqError` for a bad argument (an unknown `lang` lists the known
    ones), and `DebianPackageError` naming what is missing when the stamps
    are not cached and apt cannot fetch them.
    """
    if not isinstance(lang, str) or not lang:
        raise KseqError(f"`lang` must be a locale such as 'en' or 'fr'. Received: lang={lang!r}")
    image_size = check_int("image_size", image_size, minimum=16, maximum=512)
    seed = check_int("seed", seed, minimum=0)
    if not isinstance(with_categories, bool):
        raise KseqError("`with_categories` must be True or False. "
                        f"Received: with_categories={with_categories!r}")
    svg = "svg" if svg_renderer() is not None else "nosvg"
    folder = os.path.join(cache_dir or os.path.join(kseq_home(), "tuxpaint_captions"),
                          f"stamps-{image_size}px-{svg}-f{FORMAT}")
    rows, report = cached_image_set(folder, "tuxpaint_captions", FORMAT,
                                    lambda scratch: _build(scratch, image_size))
    if lang not in report["languages"]:
        raise KseqError(f"`lang` must be one of the stamps' locales {list(report['languages'])}. "
                        f"Received: lang={lang!r}")
    captioned = [row for row in rows if lang == "en" or lang in row["captions"]]
    if len(captioned) < len(rows):
        _progress(f"{len(rows) - len(captioned)} of {len(rows)} stamps have no {lang} caption: "
                  "skipped")
    splits = {name: [] for name in SPLITS}
    for row, png in zip(captioned, read_images(folder, captioned)):
        caption = row["english"] if lang == "en" else row["captions"][lang]
        item = (png, caption, row["category"]) if with_categories else (png, caption)
        splits[split_of(row["english"], seed)].append(item)
    return splits


def _stamp_tree():
    return unpacked_packages([PACKAGE], PACKAGE, progress=_progress)


def stamp_png(path, image_size):
    """PNG bytes of the stamp image at `path` (PNG or SVG), fitted into the square."""
    Image, _, _ = pillow("tuxpaint_captions")
    if path.endswith(".svg"):
        image = render_svg(path, image_size)
    else:
        with Image.open(path) as opened:
            image = opened.convert("RGBA")  # grey + alpha and palette transparency kept
    return png_bytes(fit_square(image, image_size))


def _build(scratch, image_size):
    """Renders every stamp into `scratch`; returns `(rows, report)`."""
    started = time.monotonic()
    tree = _stamp_tree()
    stamps, skipped = read_stamps(os.path.join(tree, STAMPS))
    can_draw_svg = svg_renderer() is not None
    if not can_draw_svg:
        _progress("cairosvg is not available (pip install cairosvg; it needs libcairo): "
                  f"skipping the {sum(s['source'] == 'svg' for s in stamps)} SVG-only stamps")
    rows, unreadable = [], []
    for index, stamp in enumerate(stamps, 1):
        if stamp["source"] == "png" or can_draw_svg:
            path = os.path.join(tree, STAMPS, f"{stamp['stem']}.{stamp['source']}")
            try:
                png = stamp_png(path, image_size)
            except (OSError, ValueError, SyntaxError) as error:  # a broken file: skip it
                unreadable.append(f"{stamp['stem']}: {' '.join(str(error).split())[:120]}")
            else:
                rows.append({**stamp, "image": write_image(scratch, len(rows), png)})
        if index % _PROGRESS_EVERY == 0 or index == len(stamps):
            _progress(f"rendered {index}/{len(stamps)} stamps")
    if os.path.isfile(os.path.join(tree, COPYRIGHT)):
        shutil.copyfile(os.path.join(tree, COPYRIGHT), os.path.join(scratch, "COPYRIGHT.debian"))
    counts = _counts(stamps, rows, skipped, unreadable, can_draw_svg)
    report = {
        "source": {"package": PACKAGE, "version": (package_versions(tree) or {}).get(PACKAGE),
                   "folder": STAMPS, "svg_renderer": svg_renderer_version()},
        "licence": LICENCE,
        "image_size": image_size,
        "counts": counts,
        "unreadable": unreadable,
        "languages": language_counts(rows),
        "categories": dict(sorted(collections.Counter(row["category"] for row in rows).items())),
        "split_sizes_seed0": dict(collections.Counter(split_of(r["english"]) for r in rows)),
        "build_seconds": round(time.monotonic() - started, 1),
    }
    _progress(f"{counts['images']} stamps rendered ({counts['png']} PNG, {counts['svg']} SVG), "
              f"{counts['svg_skipped']} SVG skipped, {len(report['languages'])} locales")
    return rows, report


def _counts(stamps, rows, skipped, unreadable, can_draw_svg):
    svg_only = sum(stamp["source"] == "svg" for stamp in stamps)
    return {"stamps": len(stamps), "images": len(rows),
            "png": sum(row["source"] == "png" for row in rows),
            "svg": sum(row["source"] == "svg" for row in rows),
            "svg_only": svg_only, "svg_skipped": 0 if can_draw_svg else svg_only,
            "unreadable": len(unreadable), "unique_english": len({r["english"] for r in rows}),
            "texts_skipped": skipped}
