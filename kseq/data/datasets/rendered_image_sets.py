"""Image sets rendered once into a cache folder and published whole.

A builder that turns source files (a font, stamp PNGs and SVGs) into images
renders them once into a private temporary folder beside the final one; that
folder holds

- `images/00000.png`, ...: square RGBA PNGs, transparent where the source is
  (`kseq.data.pipeline.image_decoding` composites alpha on white itself, so alpha is kept),
- `rows.json`: one dict per image, with its file under `"image"`,
- `report.json`, written last: counts, skips, languages, licences, and the
  builder's `kind` and `format` (its presence with both right marks a whole set),

and is then renamed into place (`cache_folders.publish_directory`). A kill
leaves only a temporary folder; a set of another format is rebuilt beside.

Example:
>>> import os, tempfile
>>> from kseq.data.datasets.rendered_image_sets import cached_image_set, read_images, write_image
>>> def build(scratch):
...     rows = [{"image": write_image(scratch, 0, b"png bytes"), "caption": "one"}]
...     return rows, {"counts": {"images": 1}}
>>> folder = os.path.join(tempfile.mkdtemp(), "set")
>>> rows, report = cached_image_set(folder, "example", 1, build)
>>> read_images(folder, rows), report["counts"]
([b'png bytes'], {'images': 1})
>>> cached_image_set(folder, "example", 1, None)[0] == rows  # cached: nothing rebuilt
True
"""

import io
import json
import os
import shutil
import tempfile

from kseq.atomic_files import TEMPORARY_PREFIX, atomic_write_json
from kseq.data.sources.cache_folders import publish_directory, remove_stale_temporary
from kseq.errors import KseqError

REPORT = "report.json"
ROWS = "rows.json"
IMAGES = "images"


def pillow(purpose):
    """The `PIL` modules `(Image, ImageDraw, ImageFont)`, or `KseqError` saying how to get them."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise KseqError(f"{purpose} needs Pillow to draw images: pip install Pillow "
                        "(it comes with the kseq[data] extra). Received: no module named PIL"
                        ) from None
    return Image, ImageDraw, ImageFont


def fit_square(image, size):
    """An RGBA `size` x `size` copy of the PIL image: longest side `size`, centred, the
    margins transparent (Pillow resizes RGBA with premultiplied alpha: no dark fringes)."""
    Image, _, _ = pillow("fit_square")
    image = image.convert("RGBA")
    scale = size / max(image.size)
    width, height = (max(1, min(size, round(side * scale))) for side in image.size)
    if (width, height) != image.size:
        image = image.resize((width, height), Image.LANCZOS)
    square = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    square.paste(image, ((size - width) // 2, (size - height) // 2))
    return square


def png_bytes(image):
    """The PNG encoding of a PIL image (the same bytes for the same pixels)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def write_image(scratch, index, png):
    """Writes `png` as image number `index` of the set being built; returns its row path."""
    relative = f"{IMAGES}/{index:05d}.png"
    os.makedirs(os.path.join(scratch, IMAGES), exist_ok=True)
    with open(os.path.join(scratch, relative), "wb") as handle:
        handle.write(png)
    return relative


def read_images(folder, rows):
    """The PNG bytes of each row of the set in `folder`, in the order of `rows`."""
    images = []
    for row in rows:
        with open(os.path.join(folder, row["image"]), "rb") as handle:
            images.append(handle.read())
    return images


def load_image_set(folder, kind, format_version):
    """`(rows, report)` of a whole set of this kind and format in `folder`, else None."""
    try:
        with open(os.path.join(folder, REPORT), encoding="utf-8") as handle:
            report = json.load(handle)
        if report.get("kind") != kind or report.get("format") != format_version:
            return None
        with open(os.path.join(folder, ROWS), encoding="utf-8") as handle:
            rows = json.load(handle)
    except (OSError, ValueError, AttributeError):
        return None  # absent, cut or from another kseq: built again
    return rows, report


def cached_image_set(folder, kind, format_version, build):
    """`(rows, report)` of the set in `folder`, first built with `build(scratch)` if needed.

    `build` writes its images with `write_image(scratch, ...)` and returns
    `(rows, report)`; `rows.json` and then `report.json` (with `kind` and
    `format` added) are written after it, and the folder is published whole.
    Two processes may build at once: the first whole set wins.
    """
    loaded = load_image_set(folder, kind, format_version)
    if loaded is not None:
        return loaded
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, exist_ok=True)
    remove_stale_temporary(parent)
    scratch = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX, dir=parent)
    try:
        rows, report = build(scratch)
        atomic_write_json(os.path.join(scratch, ROWS), rows)
        atomic_write_json(os.path.join(scratch, REPORT),
                          {"kind": kind, "format": format_version, **report})
        publish_directory(scratch, folder,
                          lambda path: load_image_set(path, kind, format_version) is not None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # gone already when it became `folder`
    loaded = load_image_set(folder, kind, format_version)
    if loaded is None:
        raise KseqError(f"The {kind} image set could not be read back after building it. "
                        f"Received: {folder}")
    return loaded
