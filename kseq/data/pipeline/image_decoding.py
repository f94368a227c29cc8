"""The one image function: encoded bytes -> RGB pixels of a fixed size, inside the graph.

Training, `Captioner.caption()` and the exported model all decode images here,
so a served image gives the tensor the model was trained on:

1. **Checks first** (`image_headers.refusal`, cheapest first). A row over
   `max_bytes` is refused from its length; then an animated WebP (it crashes
   TensorFlow's decoder); then the pixels the decoder will allocate, read from
   the headers (PNG, GIF, BMP, WebP; JPEG through `tf.image.extract_jpeg_shape`),
   over `max_pixels` (a 100,000 x 100,000 PNG would otherwise allocate 40 GB; a
   GIF counts its frames and its canvas, not only its logical screen); then a
   JPEG with too few bytes for its frame, and a JPEG or PNG cut short.
2. **Decode, keeping alpha.** Each format decodes with its own channels
   (grey, grey + alpha, RGB, RGBA; `decode_image(channels=4)` refuses JPEG
   and GIF, and `channels=3` refuses an RGBA WebP), then becomes RGBA.
3. **Composite on white.** Transparent pixels become white, as an image
   viewer shows them (`decode_png(channels=3)` would drop the alpha channel and
   show what lies under it, often black). GIF is the exception: TF's GIF
   decoder has no alpha channel, so a transparent GIF pixel shows its palette
   colour (often black).
4. **Letterbox.** Resized to fit `[H, W]` keeping the aspect ratio
   (anti-aliased), the margins white; rounded back to uint8. The model scales
   pixels itself (each backbone knows its input range).

A bad row (empty, not an image, truncated, too large, animated WebP) must not fail a
batch: TF's decoders raise inside a graph, and one failing row fails the whole
batch. `decode_rows` therefore decodes each row inside a `tf.data` pipeline
with `ignore_errors()` (core ops only, so TF Serving runs it) and reports
`valid [B]`; a refused row comes out white.

Shape letters: `B` batch, `H`, `W` the output size.

Example:
>>> import numpy as np, tensorflow as tf
>>> from kseq.data.pipeline.image_decoding import decode_rows
>>> rgba = np.zeros((2, 4, 4), np.uint8)  # fully transparent
>>> png = tf.io.encode_png(rgba).numpy()
>>> images, valid = decode_rows(tf.constant([png, b"not an image"]), (8, 8))
>>> images.shape, valid.numpy().tolist()
(TensorShape([2, 8, 8, 3]), [True, False])
>>> int(images[0].numpy().min())  # transparent -> white
255
"""

import functools
import operator

import tensorflow as tf  # in-graph decoding: there is no keras.ops twin

from kseq.data.pipeline.image_headers import (DEFAULT_MAX_BYTES, declared_pixels,  # noqa: F401
                                              header_size, refusal)

DEFAULT_MAX_PIXELS = 40_000_000


def _to_rgba(image):
    """`[h, w, 1|2|3|4]` (grey, grey + alpha, RGB, RGBA) -> `[h, w, 4]`."""
    channels = tf.shape(image)[-1]
    grey, alpha = image[..., :1], image[..., -1:]
    opaque = tf.fill(tf.concat([tf.shape(image)[:2], [1]], 0), 255.0)
    return tf.switch_case(channels - 1, [
        lambda: tf.concat([grey, grey, grey, opaque], -1),
        lambda: tf.concat([grey, grey, grey, alpha], -1),
        lambda: tf.concat([image[..., :3], opaque], -1),
        lambda: image[..., :4]], default=lambda: image[..., :4])


def decode_one(encoded, size, max_pixels=DEFAULT_MAX_PIXELS, max_bytes=DEFAULT_MAX_BYTES):
    """One encoded image -> uint8 `[H, W, 3]` (see the module docstring); raises when bad."""
    height, width = size
    why = refusal(encoded, max_pixels, max_bytes)
    # The decoder waits for the checks: an animated WebP must never reach it.
    with tf.control_dependencies([tf.debugging.Assert(tf.equal(why, ""), [why])]):
        native = tf.io.decode_image(encoded, channels=0, expand_animations=False)
    rgba = _to_rgba(tf.cast(native, tf.float32))  # [h, w, 4]
    rgba.set_shape([None, None, 4])
    alpha = rgba[..., 3:] / 255.0
    rgb = rgba[..., :3] * alpha + 255.0 * (1.0 - alpha)
    return tf.cast(tf.clip_by_value(tf.round(_letterbox(rgb, height, width)), 0.0, 255.0),
                   tf.uint8)


def _letterbox(rgb, height, width):
    """Fits `rgb` `[h, w, 3]` into `[height, width]` keeping its aspect, centred on white.

    Each side is at least one pixel (`resize_with_pad` rounds a 1 x 200 image's
    short side to 0 and fails).
    """
    shape = tf.cast(tf.shape(rgb)[:2], tf.float64)
    scale = tf.minimum(height / shape[0], width / shape[1])
    size = tf.maximum(tf.cast(tf.round(shape * scale), tf.int32), 1)
    size = tf.minimum(size, [height, width])
    resized = tf.image.resize(rgb, size, antialias=True)  # [h', w', 3]
    top, left = (height - size[0]) // 2, (width - size[1]) // 2
    # Pad the inverted image with zeros, then invert back: the margins are white.
    boxed = tf.image.pad_to_bounding_box(255.0 - resized, top, left, height, width)
    return 255.0 - boxed


def decode_rows(encoded, size, max_pixels=DEFAULT_MAX_PIXELS, max_bytes=DEFAULT_MAX_BYTES):
    """`[B]` encoded images -> `(images [B, H, W, 3] uint8, valid [B] bool)`; never raises
    for a bad row (it comes out white with `valid` False).

    `size` (`(H, W)`), `max_pixels` and `max_bytes` (the longest row decoded) are integers.
    Called eagerly, the decoding runs as one `tf.function` per (size, bounds), traced on
    the first call; inside a traced function it becomes part of that graph."""
    size = tuple(operator.index(side) for side in size)  # one cache key, ints in both paths
    bounds = operator.index(max_pixels), operator.index(max_bytes)
    encoded = tf.convert_to_tensor(encoded, tf.string)
    if tf.executing_eagerly():
        return _compiled_decoder(size, bounds)(encoded)
    return _decode_rows(encoded, size, bounds)


@functools.lru_cache(maxsize=16)
def _compiled_decoder(size, bounds):
    """`_decode_rows` traced once per (size, bounds): run eagerly it would rebuild and
    re-trace its `tf.data` pipeline on every call (about 1 s per 64 images, against 0.05 s)."""
    return tf.function(lambda encoded: _decode_rows(encoded, size, bounds),
                       input_signature=[tf.TensorSpec([None], tf.string)])


def _decode_rows(encoded, size, bounds):
    """`decode_rows` inside a graph; `bounds`: `(max_pixels, max_bytes)`."""
    height, width = size
    rows = tf.shape(encoded, out_type=tf.int64)[0]
    decoded = (tf.data.Dataset.from_tensor_slices((tf.range(rows), encoded))
               .map(lambda index, image: (index, decode_one(image, size, *bounds)))
               .ignore_errors())
    # One sentinel row, so the batch below exists even when every row is bad.
    sentinel = tf.data.Dataset.from_tensors(
        (tf.constant(-1, tf.int64), tf.fill([height, width, 3], tf.constant(255, tf.uint8))))
    indices, images = decoded.concatenate(sentinel).batch(rows + 1).get_single_element()
    good = indices >= 0
    indices, images = tf.boolean_mask(indices, good), tf.boolean_mask(images, good)
    valid = tf.scatter_nd(indices[:, None], tf.ones_like(indices, tf.bool), [rows])
    white = tf.fill(tf.stack([rows, height, width, 3]), tf.constant(255, tf.uint8))
    images = tf.tensor_scatter_nd_update(white, indices[:, None], images)
    return images, valid
