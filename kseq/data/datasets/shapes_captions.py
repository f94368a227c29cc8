r"""The built-in `shapes_captions` task: drawn scenes of two shapes -> a caption.

Each image shows two objects, a colour and a shape each, in one of four
relations: "a red circle above a blue square". A scene is the tuple
`(colour1, shape1, relation, colour2, shape2)` with two distinct objects.

The split is over tuples, not images, so test captions are unseen
combinations (compositional generalisation). A tuple and its converse ("A
above B" / "B below A") show the same layout, so they are held out together:
the 1,740 layouts (ordered object pairs x {vertical, horizontal}) are shuffled
with a fixed seed, 20% go to test, 10% to valid and the rest to train, and the
choice is checked so that training sees every colour-shape pair as first and
as second object and every relation. The object named first is drawn larger
(32-38% of the side against 20-26%), so each picture has one right caption
(without that, "A above B" and "B below A" describe the same picture, and
exact match cannot pass 50%). The split never depends on `seed`;
`seed` only draws the images, so the same seed gives identical PNG bytes.

Images are drawn with numpy (masks for a chunk of images at once) and
encoded by a small zlib PNG writer: RGB, white background, no Pillow or
TensorFlow needed.
"""

import functools
import struct
import zlib

import numpy as np

from kseq.arguments import check_int
from kseq.errors import KseqError

COLOURS = ("red", "green", "blue", "yellow", "purple", "orange")
SHAPES = ("circle", "square", "triangle", "cross", "diamond")
RELATIONS = ("above", "below", "left of", "right of")
COLOUR_VALUES = {  # RGB before jitter; far apart so each object is one clear colour
    "red": (215, 25, 30),
    "green": (30, 155, 45),
    "blue": (35, 65, 220),
    "yellow": (235, 205, 20),
    "purple": (135, 40, 170),
    "orange": (250, 130, 15),
}
SPLITS = ("train", "valid", "test")
TEST_SHARE = 0.2
VALID_SHARE = 0.1
_SPLIT_SEED = 1_740  # fixed: the tuple split never moves with `seed`
_COLOUR_JITTER = 12  # per channel, +-
_MAX_SIZE = 1_000_000  # images per split
_CHUNK_PIXELS = 1 << 22  # image pixels per numpy chunk (12 MiB of RGB)
_SIZE_RANGE = (0.20, 0.38)  # object box side / image side, both objects
# The object named first is the larger one: "A above B" and "B below A" would
# otherwise both describe one picture, and no model could tell which to say.
_FIRST_SIZES, _SECOND_SIZES = (0.32, 0.38), (0.20, 0.26)


def caption_of(scene):
    """The caption of a tuple: `("orange", "cross", "above", "red", "circle")` ->
    `"an orange cross above a red circle"`."""
    colour1, shape1, relation, colour2, shape2 = scene
    return (f"{_article(colour1)} {colour1} {shape1} {relation} "
            f"{_article(colour2)} {colour2} {shape2}")


def parse_caption(caption):
    """The tuple of a caption (the inverse of `caption_of`); `KseqError` if it is not one."""
    words = caption.split() if isinstance(caption, str) else []
    if len(words) == 8:  # a two-word relation: "left of", "right of"
        words = words[:3] + [" ".join(words[3:5])] + words[5:]
    if len(words) == 7:
        article1, colour1, shape1, relation, article2, colour2, shape2 = words
        scene = (colour1, shape1, relation, colour2, shape2)
        if (colour1 in COLOURS and colour2 in COLOURS and shape1 in SHAPES and shape2 in SHAPES
                and relation in RELATIONS and (colour1, shape1) != (colour2, shape2)
                and article1 == _article(colour1) and article2 == _article(colour2)):
            return scene
    raise KseqError("`caption` must read like 'a red circle above a blue square' with colours "
                    f"{COLOURS}, shapes {SHAPES} and relations {RELATIONS}. "
                    f"Received: caption={caption!r}")


def shapes_caption_tuples():
    """The fixed split of all tuples: `{"train", "valid", "test"}` -> list of tuples.

    3,480 tuples in all (30 objects x 29 x 4 relations): 696 (20%) test,
    348 (10%) valid, 2,436 train, disjoint, the same on every call and machine.
    """
    return {name: list(scenes) for name, scenes in _tuple_split().items()}


def shapes_captions(train_size=2000, valid_size=200, test_size=400, image_size=64, seed=0):
    r"""Builds `{"train", "valid", "test"}` lists of `(png_bytes, caption)` pairs.

    Each split draws its images from its own tuples (`shapes_caption_tuples()`),
    going through them in a shuffled order, so tuples repeat only once a split
    has used them all. Objects have random sizes (the first named 32%-38% of the
    image side, the second 20%-26%),
    positions (clearly in the relation, never overlapping, roughly aligned on the
    other axis) and a slight colour jitter.

    Args:
        train_size, valid_size, test_size: images per split: integers >= 0 (0 leaves
            that split empty), at most 1,000,000 each, at least 1 in all.
        image_size: the side of the square RGB images in pixels, 32-512.
        seed: the random seed of the images, an integer >= 0; the same seed gives the
            same bytes. Each split has its own stream, so changing one split's size
            leaves the other splits' images as they were.

    Raises `KseqError` naming the argument for a bad value (`-5`, `2.5`, `True`).

    Example:
    >>> from kseq.data import shapes_captions
    >>> from kseq.data.datasets.shapes_captions import parse_caption
    >>> splits = shapes_captions(train_size=3, valid_size=1, test_size=2, image_size=32)
    >>> png, caption = splits["test"][0]
    >>> len(splits["train"]), png.startswith(b"\x89PNG\r\n\x1a\n")
    (3, True)
    >>> parse_caption("an orange cross left of a red circle")
    ('orange', 'cross', 'left of', 'red', 'circle')
    """
    sizes = {
        "train": check_int("train_size", train_size, minimum=0, maximum=_MAX_SIZE),
        "valid": check_int("valid_size", valid_size, minimum=0, maximum=_MAX_SIZE),
        "test": check_int("test_size", test_size, minimum=0, maximum=_MAX_SIZE),
    }
    image_size = check_int("image_size", image_size, minimum=32, maximum=512)
    seed = check_int("seed", seed, minimum=0)
    if sum(sizes.values()) < 1:
        raise KseqError("train_size + valid_size + test_size must be at least 1. Received: "
                        + ", ".join(f"{name}_size={size}" for name, size in sizes.items()))
    splits = {}
    for index, name in enumerate(SPLITS):
        rng = np.random.default_rng([seed, index])  # one stream per split
        scenes = _cycle(_tuple_split()[name], sizes[name], rng)
        images = _draw_scenes(scenes, image_size, rng)
        splits[name] = [(_encode_png(image), caption_of(scene))
                        for image, scene in zip(images, scenes)]
    return splits


def _article(colour):
    return "an" if colour[0] in "aeiou" else "a"


def _cycle(scenes, size, rng):
    """`size` tuples: shuffled passes through `scenes`, each pass a new order."""
    passes = -(-size // len(scenes))
    order = np.concatenate([rng.permutation(len(scenes)) for _ in range(passes)] or [[]])
    return [scenes[i] for i in order[:size].astype(int)]


@functools.lru_cache(maxsize=1)
def _tuple_split():
    """Layouts (A first on an axis, then B) -> tuples, split by layout (see module doc)."""
    objects = [(c, s) for c in COLOURS for s in SHAPES]
    layouts = [(a, b, axis) for a in objects for b in objects if a != b for axis in (0, 1)]
    order = np.random.default_rng(_SPLIT_SEED).permutation(len(layouts))
    n_test = round(TEST_SHARE * len(layouts))
    n_valid = round(VALID_SHARE * len(layouts))
    parts = {"test": order[:n_test], "valid": order[n_test:n_test + n_valid],
             "train": order[n_test + n_valid:]}
    split = {}
    for name in SPLITS:
        scenes = []
        for i in sorted(parts[name]):
            first, second, axis = layouts[i]
            forward, backward = ("above", "below") if axis == 0 else ("left of", "right of")
            scenes.append((*first, forward, *second))
            scenes.append((*second, backward, *first))
        split[name] = tuple(scenes)
    _check_coverage(split["train"], objects)
    return split


def _check_coverage(train, objects):
    """Raises unless training has every object in both roles and every relation."""
    firsts = {scene[:2] for scene in train}
    seconds = {scene[3:] for scene in train}
    relations = {scene[2] for scene in train}
    missing = ([f"{o} as first" for o in objects if o not in firsts]
               + [f"{o} as second" for o in objects if o not in seconds]
               + [r for r in RELATIONS if r not in relations])
    if missing:  # a fixed seed: this holds on every machine, checked anyway
        raise RuntimeError(f"The shapes tuple split leaves out of training: {missing}")


def _layout(scenes, image_size, rng):
    """Per image: sizes `(N, 2)` and centres `(N, 2, 2)` (object, [y, x]) in pixels."""
    n = len(scenes)
    side = float(image_size)
    margin, gap = 0.04 * side, 0.07 * side
    sizes = np.stack([rng.uniform(low * side, high * side, size=n)
                      for low, high in (_FIRST_SIZES, _SECOND_SIZES)], axis=1)
    relation = np.array([RELATIONS.index(s[2]) for s in scenes], dtype=int).reshape(n)
    main_axis = np.where(relation < 2, 0, 1)  # 0: y (above/below), 1: x (left/right)
    first = np.where((relation == 0) | (relation == 2), 0, 1)  # object met first on the axis
    rows = np.arange(n)
    size_first, size_second = sizes[rows, first], sizes[rows, 1 - first]
    # Main axis: the slack left after both objects, the margins and the gap, cut in three.
    slack = side - 2 * margin - gap - size_first - size_second
    cuts = np.sort(rng.uniform(0.0, 1.0, size=(n, 2)), axis=1) * slack[:, None]
    start_first = margin + cuts[:, 0]
    start_second = start_first + size_first + gap + (cuts[:, 1] - cuts[:, 0])
    main = np.empty((n, 2))
    main[rows, first] = start_first + size_first / 2
    main[rows, 1 - first] = start_second + size_second / 2
    # Cross axis: centres at most a quarter of the main distance apart (an unambiguous relation).
    offset = rng.uniform(-0.25, 0.25, size=n) * (main[:, 1] - main[:, 0])
    low = np.maximum(margin + sizes[:, 0] / 2 + offset / 2, margin + sizes[:, 1] / 2 - offset / 2)
    high = np.minimum(side - margin - sizes[:, 0] / 2 + offset / 2,
                      side - margin - sizes[:, 1] / 2 - offset / 2)
    middle = low + rng.uniform(0.0, 1.0, size=n) * (high - low)
    cross = np.stack([middle - offset / 2, middle + offset / 2], axis=1)  # (N, 2)
    centres = np.empty((n, 2, 2))
    centres[rows, :, main_axis] = main
    centres[rows, :, 1 - main_axis] = cross
    return sizes, centres


def _shape_mask(shape, u, v):
    """Inside-masks on unit coordinates (`u` right, `v` down, the box is [-1, 1]^2)."""
    if shape == "circle":
        return u * u + v * v <= 1.0
    if shape == "square":
        return (np.abs(u) <= 0.85) & (np.abs(v) <= 0.85)
    if shape == "diamond":
        return np.abs(u) + np.abs(v) <= 1.0
    if shape == "triangle":  # apex up at v=-0.9, base at v=0.8
        return (v <= 0.8) & (np.abs(u) <= 1.0 * (v + 0.9) / 1.7)
    arm = 0.34  # cross: a plus sign
    return ((np.abs(u) <= arm) & (np.abs(v) <= 1.0)) | ((np.abs(v) <= arm) & (np.abs(u) <= 1.0))


def _draw_scenes(scenes, image_size, rng):
    """Yields the `(H, W, 3)` uint8 image of each scene (H = W = image_size).

    All random draws happen first; then, for a chunk of images per numpy call,
    each object's mask is computed in an `L x L` window around it (`L` just over
    the largest object) and scattered in. Memory stays at one chunk of images.
    """
    n = len(scenes)
    sizes, centres = _layout(scenes, image_size, rng)
    palette = np.array([COLOUR_VALUES[c] for c in COLOURS], dtype=int)
    colour_ids = np.array([[COLOURS.index(s[0]), COLOURS.index(s[3])] for s in scenes],
                          dtype=int).reshape(n, 2)
    shape_ids = np.array([[SHAPES.index(s[1]), SHAPES.index(s[4])] for s in scenes],
                         dtype=int).reshape(n, 2)
    jitter = rng.integers(-_COLOUR_JITTER, _COLOUR_JITTER + 1, size=(n, 2, 3))
    colours = np.clip(palette[colour_ids] + jitter, 0, 255).astype(np.uint8)  # (N, 2, 3)
    window = min(image_size, int(np.ceil(_SIZE_RANGE[1] * image_size)) + 3)  # L
    # Window corners (N, 2 objects, [y, x]): the object's box always lies inside.
    corners = np.clip(np.floor(centres - sizes[..., None] / 2).astype(int) - 1,
                      0, image_size - window)
    steps = np.arange(window, dtype=np.float32) + 0.5  # pixel centres in the window
    chunk = max(1, _CHUNK_PIXELS // (image_size * image_size))
    for begin in range(0, n, chunk):
        part = slice(begin, min(n, begin + chunk))
        images = np.full((part.stop - begin, image_size, image_size, 3), 255, dtype=np.uint8)
        for k in (0, 1):
            half = (sizes[part, k] / 2).astype(np.float32)[:, None, None]
            offset = (centres[part, k] - corners[part, k]).astype(np.float32)  # (B, 2)
            v = (steps[None, :, None] - offset[:, 0, None, None]) / half  # (B, L, 1)
            u = (steps[None, None, :] - offset[:, 1, None, None]) / half  # (B, 1, L)
            mask = np.zeros((offset.shape[0], window, window), dtype=bool)  # (B, L, L)
            ids = shape_ids[part, k]
            for shape_id, shape in enumerate(SHAPES):
                chosen = ids == shape_id
                if chosen.any():
                    mask[chosen] = _shape_mask(shape, u[chosen], v[chosen])
            b, i, j = np.nonzero(mask)
            images[b, corners[part, k, 0][b] + i, corners[part, k, 1][b] + j] = (
                colours[part, k][b])
        yield from images


def _encode_png(image):
    """PNG bytes of an `(H, W, 3)` uint8 image (8-bit RGB, filter 0 on every row)."""
    height, width, _ = image.shape
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 1:] = image.reshape(height, 3 * width)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))
