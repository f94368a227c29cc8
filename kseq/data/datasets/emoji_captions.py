r"""The `emoji_captions` task: emoji images -> their names, in 14 languages.

Images: Noto Color Emoji from the Debian package `fonts-noto-color-emoji`
(fetched with `apt-get download` + `dpkg-deb -x` into
`$KSEQ_HOME/debian/`, never installed), each fully-qualified emoji drawn from
its full code-point sequence (`kseq.data.datasets.emoji_rendering`) as a square RGBA
PNG, transparent around the glyph. Emoji the font has no single glyph for
(those newer than the font) are skipped and counted in the report.

Captions: the names of the PyPI `emoji` package (`emoji.EMOJI_DATA`, every
name in `emoji.LANGUAGES`: en es ja ko pt it fr de fa id zh ru tr ar),
normalised by `caption_of_name`: NFC, the surrounding colons dropped, `_`
read as a space, runs of spaces collapsed; case and punctuation kept
(`':France:'` -> `'France'`, `':keycap_#:'` -> `'keycap #'`).

Split: by a seeded hash of the full code-point sequence (`keyed_split`,
about 70/10/20%), so each variant (`👍🏽`) is placed on its own. The test
split is cut in two by each emoji's base (`base_of`):

- `test_seen_base`: the base of some training emoji ("thumbs up: medium skin
  tone" in test, "thumbs up" or "thumbs up: dark skin tone" in training);
- `test_unseen_base`: no training emoji has its base.

The base rule works on code points: skin-tone modifiers (U+1F3FB-1F3FF) and
variation selectors (U+FE0E, U+FE0F) are dropped, a ZWJ followed by a gender
sign (♀ U+2640, ♂ U+2642) or by the direction arrow (➡ U+27A1, Unicode 15.1's
"facing right") is dropped, and man / woman (U+1F468, U+1F469) become person
(U+1F9D1), boy / girl child, old man / old woman older person. So 🏃‍♀️,
🏃🏽‍♂️ and 🏃 share a base, and so do 👩‍🚀 and 🧑🏿‍🚀; 👨‍👩‍👧 is 🧑‍🧑‍🧒.
Pairs the rule does not know (🤴 / 👸, 🫱🏻‍🫲🏿 of 🤝) keep their own bases.

Licences: the font is under the SIL Open Font License 1.1 and the emoji
artwork under the Apache License 2.0 (Google; the Debian copyright file is
copied into the cache as `COPYRIGHT.debian`); the `emoji` package is under
the New BSD licence. Rendered images may be redistributed under those terms.

Example:
>>> from kseq.data.datasets.emoji_captions import base_of, caption_of_name
>>> caption_of_name(":woman_astronaut_medium_skin_tone:")
'woman astronaut medium skin tone'
>>> base_of("\U0001F469\U0001F3FD\u200d\U0001F680") == "\U0001F9D1\u200d\U0001F680"
True
"""

import collections
import os
import shutil
import sys
import time
import unicodedata

from kseq.arguments import check_int
from kseq.atomic_files import file_sha256
from kseq.data.sources.debian_packages import package_versions, unpacked_packages
from kseq.data.datasets.emoji_rendering import FONT_FILE, load_emoji_font, render_emoji
from kseq.data.datasets.keyed_split import SPLITS, split_of
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.datasets.rendered_image_sets import cached_image_set, read_images, write_image
from kseq.errors import KseqError

PACKAGE = "fonts-noto-color-emoji"
REQUIREMENT = "emoji>=2.14,<3"
COPYRIGHT = f"usr/share/doc/{PACKAGE}/copyright"
FORMAT = 1  # bump when rendering or rows change: older cached sets are rebuilt beside
DEFAULT_IMAGE_SIZE = 72
LICENCE = ("Images: Noto Color Emoji (Debian fonts-noto-color-emoji): the font is under the "
           "SIL Open Font License 1.1 (OFL-1.1), the emoji artwork under the Apache License 2.0 "
           "(Google; see COPYRIGHT.debian beside this report). Captions: names from the PyPI "
           "emoji package (New BSD licence, Taehoon Kim and Kevin Wurster).")
SKIN_TONES = frozenset(chr(code) for code in range(0x1F3FB, 0x1F400))
VARIATION_SELECTORS = frozenset("\ufe0e\ufe0f")
ZWJ = "\u200d"
JOINED_VARIANTS = frozenset("\u2640\u2642\u27a1")  # after a ZWJ: female, male, facing right
NEUTRAL_PEOPLE = {"\U0001F468": "\U0001F9D1", "\U0001F469": "\U0001F9D1",  # man, woman
                  "\U0001F466": "\U0001F9D2", "\U0001F467": "\U0001F9D2",  # boy, girl
                  "\U0001F474": "\U0001F9D3", "\U0001F475": "\U0001F9D3"}  # old man, woman
_PROGRESS_EVERY = 1000


def _progress(message):
    print(f"[emoji] {message}", file=sys.stderr, flush=True)


def emoji_package():
    """The `emoji` module, or `KseqError` naming the pip requirement."""
    try:
        import emoji
    except ImportError:
        raise KseqError(f"emoji_captions takes its captions from the PyPI package emoji: "
                        f"pip install '{REQUIREMENT}'. Received: no module named emoji") from None
    return emoji


def emoji_languages():
    """The 14 language codes of the `emoji` package's names (`emoji.LANGUAGES`)."""
    return tuple(emoji_package().LANGUAGES)


def emoji_names():
    """`{sequence: {language: raw name}}` of every fully-qualified emoji, sorted by code points."""
    emoji = emoji_package()
    languages = tuple(emoji.LANGUAGES)
    emoji.config.load_language(list(languages))  # non-English names load on request
    fully_qualified = emoji.STATUS["fully_qualified"]
    return {sequence: {lang: data[lang] for lang in languages if data.get(lang)}
            for sequence, data in sorted(emoji.EMOJI_DATA.items())
            if data.get("status") == fully_qualified}


def caption_of_name(name):
    """A caption from an `emoji` package name: `':grinning_face:'` -> `'grinning face'`."""
    text = unicodedata.normalize("NFC", name).strip()
    if len(text) >= 2 and text[0] == text[-1] == ":":
        text = text[1:-1]
    return " ".join(text.replace("_", " ").split())


def base_of(sequence):
    """The base of an emoji: its sequence without skin tone, gender or direction (module doc)."""
    kept = "".join(c for c in sequence if c not in SKIN_TONES and c not in VARIATION_SELECTORS)
    parts = kept.split(ZWJ)
    parts = parts[:1] + [part for part in parts[1:] if part not in JOINED_VARIANTS]
    return ZWJ.join("".join(NEUTRAL_PEOPLE.get(c, c) for c in part) for part in parts)


def emoji_splits(sequences, seed=0):
    """`{"train", "valid", "test", "test_seen_base", "test_unseen_base"}` -> sequences.

    Each sequence goes to one of train / valid / test by `split_of(sequence,
    seed)`; the two subsets partition test: `test_seen_base` holds the test emoji whose
    base (`base_of`) some training emoji has. Order is kept.
    """
    splits = {name: [] for name in SPLITS}
    for sequence in sequences:
        splits[split_of(sequence, seed)].append(sequence)
    trained = {base_of(sequence) for sequence in splits["train"]}
    splits["test_seen_base"] = [s for s in splits["test"] if base_of(s) in trained]
    splits["test_unseen_base"] = [s for s in splits["test"] if base_of(s) not in trained]
    return splits


def repeated_by_base(sequences, balance_bases):
    """`sequences` with each one kept `max(1, ceil(balance_bases / n))` times, `n` being how
    many of `sequences` share its base (`base_of`); order kept, repeats adjacent.

    So a base that `sequences` holds once (an object, an animal) is seen as
    often in an epoch as `balance_bases` variants of a person are.

    >>> repeated_by_base(["🐶", "👍", "👍🏽", "👍🏿"], 2)
    ['🐶', '🐶', '👍', '👍🏽', '👍🏿']
    """
    balance_bases = check_int("balance_bases", balance_bases, minimum=0)
    counts = collections.Counter(base_of(sequence) for sequence in sequences)
    return [sequence for sequence in sequences
            for _ in range(max(1, -(-balance_bases // counts[base_of(sequence)])))]


def emoji_captions(lang="en", image_size=DEFAULT_IMAGE_SIZE, seed=0, cache_dir=None,
                   balance_bases=0):
    r"""Emoji images and names: `{"train", "valid", "test", "test_seen_base",
    "test_unseen_base"}` -> lists of `(png_bytes, caption)`.

    The PNGs are RGBA, `image_size` square, transparent around the glyph;
    the two `test_*` lists partition `test` (see the module docstring).
    The first call fetches the font (10 MB) and renders every emoji once
    (about 5 s) into `<cache_dir>/noto-<size>px-emoji-<version>-f<format>/`
    with `report.json` (counts, skipped emoji, languages, licences);
    later calls read that folder.

    Args:
        lang: one of `emoji_languages()`: en es ja ko pt it fr de fa id zh ru tr ar.
        image_size: the side of the images in pixels, 16-256 (the glyphs are 136 px).
        seed: an integer >= 0 salting the split hash; 0 gives the default split.
            The images never depend on it.
        cache_dir: where rendered sets are kept; default `$KSEQ_HOME/emoji_captions`.
        balance_bases: 0 (default) or a number `R` of training examples each base
            should at least contribute to an epoch: a training emoji whose base
            `n` training emoji share is kept `max(1, ceil(R / n))` times
            (`repeated_by_base`); valid and test are never repeated.

    Raises `KseqError` for a bad argument, naming `pip install 'emoji...'`
    without the emoji package, and `DebianPackageError` naming what is
    missing when the font is not cached and apt cannot fetch it.
    """
    languages = emoji_languages()
    if lang not in languages:
        raise KseqError(f"`lang` must be one of the emoji package's languages {languages}. "
                        f"Received: lang={lang!r}")
    image_size = check_int("image_size", image_size, minimum=16, maximum=256)
    seed = check_int("seed", seed, minimum=0)
    balance_bases = check_int("balance_bases", balance_bases, minimum=0)
    folder = os.path.join(cache_dir or os.path.join(kseq_home(), "emoji_captions"),
                          f"noto-{image_size}px-emoji-{emoji_package().__version__}-f{FORMAT}")
    rows, _ = cached_image_set(folder, "emoji_captions", FORMAT,
                               lambda scratch: _build(scratch, image_size))
    named = [row for row in rows if row["names"].get(lang)]
    if len(named) < len(rows):
        _progress(f"{len(rows) - len(named)} emoji have no {lang} name: skipped")
    pairs = dict(zip((row["emoji"] for row in named),
                     zip(read_images(folder, named),
                         (caption_of_name(row["names"][lang]) for row in named))))
    splits = emoji_splits(pairs, seed)
    splits["train"] = repeated_by_base(splits["train"], balance_bases)
    return {name: [pairs[sequence] for sequence in sequences]
            for name, sequences in splits.items()}


def _build(scratch, image_size):
    """Renders every emoji into `scratch`; returns `(rows, report)`."""
    started = time.monotonic()
    names = emoji_names()
    tree = unpacked_packages([PACKAGE], PACKAGE, progress=_progress)
    font_path = os.path.join(tree, FONT_FILE)
    font = load_emoji_font(font_path)
    rows, skipped = [], []
    for index, (sequence, by_language) in enumerate(names.items(), 1):
        png = render_emoji(font, sequence, image_size)
        if png is None:
            skipped.append(by_language.get("en", sequence))
        else:
            rows.append({"emoji": sequence, "names": by_language,
                         "image": write_image(scratch, len(rows), png)})
        if index % _PROGRESS_EVERY == 0 or index == len(names):
            _progress(f"rendered {index}/{len(names)} emoji ({len(skipped)} without a glyph)")
    if os.path.isfile(os.path.join(tree, COPYRIGHT)):
        shutil.copyfile(os.path.join(tree, COPYRIGHT), os.path.join(scratch, "COPYRIGHT.debian"))
    sizes = {name: len(part) for name, part in emoji_splits([r["emoji"] for r in rows]).items()}
    languages = sorted({lang for row in rows for lang in row["names"]})
    report = {
        "source": {"package": PACKAGE, "version": (package_versions(tree) or {}).get(PACKAGE),
                   "font": FONT_FILE, "font_sha256": file_sha256(font_path),
                   "emoji_package": emoji_package().__version__},
        "licence": LICENCE,
        "image_size": image_size,
        "counts": {"emoji": len(names), "rendered": len(rows), "skipped": len(skipped)},
        "skipped": skipped,
        "languages": {lang: sum(1 for row in rows if row["names"].get(lang))
                      for lang in languages},
        "split_sizes_seed0": sizes,
        "build_seconds": round(time.monotonic() - started, 1),
    }
    _progress(f"{len(rows)} emoji rendered, {len(skipped)} skipped (no glyph in the font); "
              f"seed 0 split {sizes}")
    return rows, report
