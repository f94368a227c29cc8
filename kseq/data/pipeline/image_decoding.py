"""The one image function: encoded bytes -> RGB pixels of a fixed size, inside the graph.

Training, `Captioner.caption()` and the exported model all decode images here,
so a served image gives the tensor the model was trained on:

1. **Size first.** The width and height are read from the header (PNG, GIF,
   BMP, WebP; JPEG through `tf.image.extract_jpeg_shape`) before anything is
   decoded; more than `max_pixels` is refused (a 100,000 x 100,000 PNG would
   otherwise allocate 40 GB). A GIF is bounded by its image descriptors, every
   frame summed, not only by its logical screen (`declared_pixels`).
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

A bad row (empty, not an image, truncated, or too large) must not fail a
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

DEFAULT_MAX_PIXELS = 40_000_000


def _bytes_at(encoded, start, count):
    """`count` bytes of `encoded` from `start` as int32 (zeros past the end)."""
    # Padded first: `substr` fails when `start` lies past the end of the string.
    piece = tf.strings.substr(tf.strings.join([encoded, b"\0" * (start + count)]), start, count)
    values = tf.cast(tf.io.decode_raw(piece, tf.uint8), tf.int64)
    values.set_shape([count])  # the byte-order helpers read the static length
    return values


def _little_endian(values):
    weights = tf.constant([1, 256, 65536, 16777216], tf.int64)[: values.shape[0]]
    return tf.reduce_sum(values * weights)


def _big_endian(values):
    return _little_endian(tf.reverse(values, [0]))


def _starts_with(encoded, magic):
    return tf.equal(tf.strings.substr(encoded, 0, len(magic)), magic)


def _webp_size(encoded):
    """(height, width) of a WebP: canvas of VP8X, or the frame header of VP8 / VP8L."""
    chunk = tf.strings.substr(tf.strings.join([encoded, b"\0" * 16]), 12, 4)
    header = _bytes_at(encoded, 20, 10)
    vp8x = (_little_endian(header[4:7]) + 1, _little_endian(header[7:10]) + 1)
    low14 = lambda value: tf.bitwise.bitwise_and(value, tf.constant(0x3FFF, tf.int64))
    vp8 = (low14(_little_endian(header[6:8])), low14(_little_endian(header[8:10])))
    bits = _little_endian(header[1:5])  # VP8L: 14 bits width-1, 14 bits height-1
    vp8l = (low14(bits) + 1, low14(tf.bitwise.right_shift(bits, tf.constant(14, tf.int64))) + 1)
    width = tf.where(tf.equal(chunk, "VP8X"), vp8x[0],
                     tf.where(tf.equal(chunk, "VP8L"), vp8l[0], vp8[0]))
    height = tf.where(tf.equal(chunk, "VP8X"), vp8x[1],
                      tf.where(tf.equal(chunk, "VP8L"), vp8l[1], vp8[1]))
    return height, width


def header_size(encoded):
    """`(height, width)` int64 from the header of one encoded image, without decoding it.

    Unknown formats give (0, 0): the decoder refuses them later.
    """
    png = (_big_endian(_bytes_at(encoded, 20, 4)), _big_endian(_bytes_at(encoded, 16, 4)))
    gif = (_little_endian(_bytes_at(encoded, 8, 2)), _little_endian(_bytes_at(encoded, 6, 2)))
    bmp_height = _little_endian(_bytes_at(encoded, 22, 4))  # negative: a top-down BMP
    bmp = (tf.where(bmp_height >= 2**31, 2**32 - bmp_height, bmp_height),
           _little_endian(_bytes_at(encoded, 18, 4)))
    cases = [(_starts_with(encoded, b"\x89PNG"), png), (_starts_with(encoded, b"GIF8"), gif),
             (_starts_with(encoded, b"BM"), bmp),
             (_starts_with(encoded, b"RIFF"), _webp_size(encoded))]
    height, width = tf.constant(0, tf.int64), tf.constant(0, tf.int64)
    for matches, (h, w) in reversed(cases):
        height, width = tf.where(matches, h, height), tf.where(matches, w, width)
    size = tf.stack([height, width])

    def jpeg_size():
        return tf.cast(tf.image.extract_jpeg_shape(encoded)[:2], tf.int64)

    return tf.cond(tf.io.is_jpeg(encoded), jpeg_size, lambda: size)


def _gif_frame_pixels(encoded):
    """The pixels of every frame of a GIF summed, as its image descriptors declare them.

    TF decodes a GIF at its frames' sizes, not at the logical screen's (a GIF
    whose screen says 1 x 1 may hold a 65,535 x 65,535 frame), and giflib
    reads every frame of an animation into memory even when only the first is
    kept: the bound is on their sum. The blocks are walked without a loop over
    bytes (a file of tiny blocks would make a `tf.while_loop` run for minutes):
    each byte is read as if it started a block, its successor is found by
    pointer jumping (`log2(n)` rounds of one gather each), and the frame sizes
    are summed along the path from the first block. GIF layout: 13-byte header
    and screen, a global colour table, then blocks until the 0x3B trailer: an
    image (0x2C, a 9-byte descriptor with width and height at +5 and +7, a
    local colour table, one byte, data sub-blocks) or an extension (0x21, a
    label, data sub-blocks); a sub-block is its length byte then that many
    bytes, and a zero length ends the chain.
    """
    data = tf.cast(tf.io.decode_raw(tf.strings.join([encoded, b"\0"]), tf.uint8), tf.int32)
    last = tf.size(data) - 1  # a zero byte: every walk that runs off the end stops there
    positions = tf.range(last + 1)
    at = lambda index: tf.gather(data, tf.minimum(index, last))

    def jump(successor, values=None):
        """Follows `successor` to its fixed point from every position, summing `values`."""
        values = tf.zeros_like(successor, tf.int64) if values is None else values

        def double(span, successor, values):  # `span`: the steps each position has walked
            return span * 2, tf.gather(successor, successor), values + tf.gather(values, successor)

        _, successor, values = tf.while_loop(lambda span, *_: span <= last, double,
                                             (tf.constant(1), successor, values))
        return successor, values

    def colour_table(packed):
        return tf.where(packed >= 128, 3 * tf.bitwise.left_shift(2, packed % 8), 0)

    # A sub-block chain from every position: its zero-length end.
    chain_end, _ = jump(tf.where(data == 0, positions,
                                 tf.minimum(positions + data + 1, last)))
    after_chain = lambda start: tf.minimum(tf.gather(chain_end, tf.minimum(start, last)) + 1, last)
    is_image, is_extension = tf.equal(data, 0x2C), tf.equal(data, 0x21)
    image_next = after_chain(positions + 11 + colour_table(at(positions + 9)))
    successor = tf.where(is_image, image_next,
                         tf.where(is_extension, after_chain(positions + 2), positions))
    width = tf.cast(at(positions + 5) + 256 * at(positions + 6), tf.int64)
    height = tf.cast(at(positions + 7) + 256 * at(positions + 8), tf.int64)
    _, pixels = jump(successor, tf.where(is_image, width * height, 0))
    first_block = tf.minimum(13 + colour_table(at(10)), last)
    return pixels[first_block]


def declared_pixels(encoded):
    """The pixels one encoded image will decode to, read from its headers without decoding.

    The header's width x height; for a GIF the larger of its screen and the sum
    of its frames (see `_gif_frame_pixels`). Unknown formats give 0.
    """
    pixels = tf.reduce_prod(header_size(encoded))
    return tf.cond(_starts_with(encoded, b"GIF8"),
                   lambda: tf.maximum(pixels, _gif_frame_pixels(encoded)), lambda: pixels)


def _pairs(data, first, second):
    """`[n - 1]` bool: byte `i` is `first` and byte `i + 1` is `second`."""
    return tf.logical_and(tf.equal(data[:-1], first), tf.equal(data[1:], second))


def _complete(encoded):
    """A JPEG's last scan is followed by its end marker; a PNG holds its IEND chunk.

    libjpeg decodes a JPEG cut anywhere after its first scan with only a
    warning, showing grey where the data stops: such a file is refused. Bytes
    after the end (a phone's "motion photo" appends a video) are allowed. The
    end marker must come after the last start-of-scan: an embedded EXIF
    thumbnail has an end marker of its own, earlier; inside a scan a 0xFF byte
    is always followed by 0x00, so no marker can be faked there.
    """
    data = tf.cast(tf.io.decode_raw(tf.strings.join([encoded, b"\0\0"]), tf.uint8), tf.int32)
    positions = tf.range(tf.size(data) - 1)
    last_scan = tf.reduce_max(tf.concat([tf.boolean_mask(positions, _pairs(data, 255, 0xDA)),
                                         [-1]], 0))
    ends = tf.boolean_mask(positions, _pairs(data, 255, 0xD9))
    jpeg_end = tf.reduce_any(ends > last_scan) & (last_scan >= 0)
    iend = [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]  # "IEND" and its CRC
    count = tf.size(data) - len(iend) + 1
    found = tf.ones([tf.maximum(count, 0)], tf.bool)
    for offset, byte in enumerate(iend):
        found &= tf.equal(data[offset: offset + tf.maximum(count, 0)], byte)
    png_end = tf.reduce_any(found)
    return tf.where(_starts_with(encoded, b"\x89PNG"), png_end,
                    tf.where(tf.io.is_jpeg(encoded), jpeg_end, True))


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


def decode_one(encoded, size, max_pixels=DEFAULT_MAX_PIXELS):
    """One encoded image -> uint8 `[H, W, 3]` (see the module docstring); raises when bad."""
    height, width = size
    pixels = declared_pixels(encoded)
    checks = [tf.debugging.assert_less_equal(
                  pixels, tf.constant(max_pixels, tf.int64),
                  message=f"image larger than max_pixels={max_pixels}"),
              tf.debugging.assert_equal(_complete(encoded), True, message="truncated image")]
    with tf.control_dependencies(checks):
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


def decode_rows(encoded, size, max_pixels=DEFAULT_MAX_PIXELS):
    """`[B]` encoded images -> `(images [B, H, W, 3] uint8, valid [B] bool)`; never raises
    for a bad row (it comes out white with `valid` False).

    `size` (`(H, W)`) and `max_pixels` are integers. Called eagerly, the decoding runs as
    one `tf.function` per (size, bound), traced on the first call; inside a traced
    function it becomes part of that graph."""
    size = tuple(operator.index(side) for side in size)  # one cache key, ints in both paths
    max_pixels = operator.index(max_pixels)
    encoded = tf.convert_to_tensor(encoded, tf.string)
    if tf.executing_eagerly():
        return _compiled_decoder(size, max_pixels)(encoded)
    return _decode_rows(encoded, size, max_pixels)


@functools.lru_cache(maxsize=16)
def _compiled_decoder(size, max_pixels):
    """`_decode_rows` traced once per (size, bound): run eagerly it would rebuild and
    re-trace its `tf.data` pipeline on every call (about 1 s per 64 images, against 0.05 s)."""
    return tf.function(lambda encoded: _decode_rows(encoded, size, max_pixels),
                       input_signature=[tf.TensorSpec([None], tf.string)])


def _decode_rows(encoded, size, max_pixels):
    """`decode_rows` inside a graph."""
    height, width = size
    rows = tf.shape(encoded, out_type=tf.int64)[0]
    decoded = (tf.data.Dataset.from_tensor_slices((tf.range(rows), encoded))
               .map(lambda index, image: (index, decode_one(image, size, max_pixels)))
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
