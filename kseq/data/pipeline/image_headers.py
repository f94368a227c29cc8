"""What an encoded image will cost, read from its bytes before any decoder sees them.

`decode_rows` (`image_decoding.py`) decodes rows that strangers send to a served
model, so every check here runs inside the graph with core TensorFlow ops (TF
Serving runs no `py_function`), and `refusal` runs them cheapest first, each only
when the ones before it passed:

1. **Row size.** A row longer than `max_bytes` is refused from its length alone
   (the later checks cost a few bytes of memory per byte of the row: a 60 MB
   JPEG's end-marker scan, +380 MB and 0.75 CPU-s, measured).
2. **GIF length.** A GIF longer than `MAX_GIF_BYTES` is refused before its
   blocks are walked (the walk costs up to ~90 bytes of memory and ~1 CPU-s per
   input MiB; a 40 MB row starting with `GIF89a` once cost +2 GB and 10-50 s).
3. **Animated WebP.** TensorFlow 2.21's WebP decoder corrupts the heap on an
   animated WebP (the process aborts: a served model's server dies): refused
   from its `VP8X` animation flag or an `ANIM` / `ANMF` chunk.
4. **Pixels.** The pixels the decoder will allocate, from the headers
   (`declared_pixels`), at most `max_pixels`.
5. **JPEG bytes per pixel.** A JPEG holding fewer than one byte per
   `JPEG_PIXELS_PER_BYTE` pixels is refused (`_jpeg_too_short`).
6. **Complete.** A JPEG's last scan has its end marker after it; a PNG holds its
   IEND chunk (`_complete`).

Example:
>>> import numpy as np, tensorflow as tf
>>> from kseq.data.pipeline.image_headers import header_size, refusal
>>> png = tf.io.encode_png(np.zeros((2, 3, 3), np.uint8))
>>> header_size(png).numpy().tolist()
[2, 3]
>>> refusal(png, max_pixels=6).numpy(), refusal(png, max_pixels=5).numpy()
(b'', b'over max_pixels')
"""

import tensorflow as tf  # in-graph byte reading: there is no keras.ops twin

DEFAULT_MAX_BYTES = 64 << 20  # a 40-megapixel photo: 10-25 MB as a JPEG, more as a PNG
MAX_GIF_BYTES = 2 << 20  # the block walk: at most ~180 MB and ~2 CPU-s per GIF (measured)
JPEG_PIXELS_PER_BYTE = 512  # one bit per 8 x 8 block: see `_jpeg_too_short`
WEBP_CHUNKS_READ = 8  # `ANIM` follows `VP8X` (and `ICCP`): the first chunks suffice


def _length(encoded):
    return tf.cast(tf.strings.length(encoded), tf.int64)


def _bytes_at(encoded, start, count):
    """`count` bytes of `encoded` from `start` (a tensor or int) as int64, zeros past the end.

    Only those bytes are copied: a header read costs nothing per byte of the row.
    """
    start = tf.minimum(tf.cast(start, tf.int64), _length(encoded))  # `substr` fails past it
    piece = tf.strings.substr(encoded, start, tf.constant(count, tf.int64))  # shorter at the end
    piece = tf.strings.substr(tf.strings.join([piece, b"\0" * count]), 0, count)
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


def _fourcc(encoded, start):
    """The four bytes at `start` as a string (shorter near the end)."""
    start = tf.minimum(tf.cast(start, tf.int64), _length(encoded))
    return tf.strings.substr(encoded, start, tf.constant(4, tf.int64))


def _webp_size(encoded):
    """(height, width) of a WebP: canvas of VP8X, or the frame header of VP8 / VP8L."""
    chunk = _fourcc(encoded, 12)
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


def animated_webp(encoded):
    """True for a RIFF file whose `VP8X` chunk sets the animation flag (bit 0x02 of byte
    20), or whose first `WEBP_CHUNKS_READ` chunks include `ANIM` or `ANMF`.

    libwebp takes the flag as "animated" (TensorFlow then decodes the frames and
    corrupts the heap: measured on TF 2.21, a 2-frame 32 x 32 WebP from Pillow);
    the chunks are checked too, so a file that names them without the flag is
    refused as well. A still WebP (a `VP8X` without the flag: one with alpha or
    EXIF) passes. Chunk layout: a fourcc, a little-endian size, the payload, one
    pad byte when the size is odd; the first chunk starts at byte 12.
    """
    flags = _bytes_at(encoded, 20, 1)[0]
    found = tf.equal(_fourcc(encoded, 12), "VP8X") & tf.not_equal(
        tf.bitwise.bitwise_and(flags, tf.constant(2, tf.int64)), 0)
    offset = tf.constant(12, tf.int64)
    for _ in range(WEBP_CHUNKS_READ):
        fourcc = _fourcc(encoded, offset)
        found |= tf.equal(fourcc, "ANIM") | tf.equal(fourcc, "ANMF")
        size = _little_endian(_bytes_at(encoded, offset + 4, 4))
        offset = offset + 8 + size + size % 2
    return _starts_with(encoded, b"RIFF") & found


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


def _follow(successor, sums=(), maxima=()):
    """Follows `successor` to its fixed point from every position, by pointer jumping.

    Returns `(end, sums, maxima)`: each `sums` array summed and each `maxima`
    array maximised along every position's path. Each round is one gather per
    array and doubles the steps walked, so a path of `k` steps takes `log2(k)`
    rounds; the loop stops as soon as every path has reached its end (a run of
    zero bytes ends at once). Fixed points must hold 0 in `sums`.
    """
    def not_done(done, *_):
        return tf.logical_not(done)

    def double(done, successor, sums, maxima):
        sums = [total + tf.gather(total, successor) for total in sums]
        maxima = [tf.maximum(top, tf.gather(top, successor)) for top in maxima]
        after = tf.gather(successor, successor)
        return tf.reduce_all(tf.equal(after, successor)), after, sums, maxima

    _, end, sums, maxima = tf.while_loop(
        not_done, double, (tf.constant(False), successor, list(sums), list(maxima)),
        maximum_iterations=64)  # 2**64 steps: never reached, a guard only
    return end, sums, maxima


def _colour_table(packed):
    """The bytes of the colour table a GIF packed-fields byte announces."""
    return tf.where(packed >= 128, 3 * tf.bitwise.left_shift(2, packed % 8), 0)


def gif_frames(encoded):
    """`(area, width, height)` int64 of a GIF's frames as their image descriptors declare
    them: the frames' areas summed, and the largest width and the largest height.

    TensorFlow decodes a GIF onto a canvas of the largest frame width by the
    largest frame height, whatever the logical screen says (a 1 x 1 screen
    holding an 8,000 x 1 and a 1 x 8,000 frame gives an 8,000 x 8,000 canvas:
    3.2 GB in kseq's pipeline, from 340 bytes), and giflib first reads every
    frame into memory at its own size: both are bounded (`declared_pixels`).

    The blocks are walked without a loop over bytes (a file of tiny blocks would
    make a `tf.while_loop` run for minutes): each byte is read as if it started a
    block, its successor is found by pointer jumping (`_follow`), and the frames
    are totalled along the path from the first block. The cost grows with the
    input (measured on 2 MiB: +115 MB and 0.8 CPU-s for one long sub-block
    chain, +176 MB and 2.0 CPU-s for 140,000 one-pixel frames), which is why
    `refusal` walks no GIF longer than `MAX_GIF_BYTES`. GIF layout: 13-byte header and screen, a global
    colour table, then blocks until the 0x3B trailer: an image (0x2C, a 9-byte
    descriptor with width and height at +5 and +7, a local colour table, one
    byte, data sub-blocks) or an extension (0x21, a label, data sub-blocks); a
    sub-block is its length byte then that many bytes, and a zero length ends the
    chain.
    """
    data = tf.cast(tf.io.decode_raw(tf.strings.join([encoded, b"\0"]), tf.uint8), tf.int32)
    last = tf.size(data) - 1  # a zero byte: every walk that runs off the end stops there
    positions = tf.range(last + 1)
    at = lambda index: tf.gather(data, tf.minimum(index, last))

    # A sub-block chain from every position: its zero-length end.
    chain_end, _, _ = _follow(tf.where(data == 0, positions,
                                       tf.minimum(positions + data + 1, last)))
    after_chain = lambda start: tf.minimum(tf.gather(chain_end, tf.minimum(start, last)) + 1, last)
    is_image, is_extension = tf.equal(data, 0x2C), tf.equal(data, 0x21)
    image_next = after_chain(positions + 11 + _colour_table(at(positions + 9)))
    successor = tf.where(is_image, image_next,
                         tf.where(is_extension, after_chain(positions + 2), positions))
    width = tf.where(is_image, at(positions + 5) + 256 * at(positions + 6), 0)
    height = tf.where(is_image, at(positions + 7) + 256 * at(positions + 8), 0)
    area = tf.cast(width, tf.int64) * tf.cast(height, tf.int64)
    _, [area], [width, height] = _follow(successor, [area], [width, height])
    first = tf.minimum(13 + _colour_table(at(10)), last)
    return area[first], tf.cast(width[first], tf.int64), tf.cast(height[first], tf.int64)


def declared_pixels(encoded):
    """The pixels one encoded image will cost, read from its headers without decoding.

    The header's width x height; for a GIF the largest of its screen, the sum of
    its frames and its canvas (largest frame width x largest frame height), see
    `gif_frames`. kseq decodes with `expand_animations=False`, so TensorFlow keeps
    one canvas, not one per frame (measured: 40 frames of 2000 x 2000 cost +145 MB,
    against +607 MB expanded); giflib's frames are the sum. Unknown formats give 0.
    """
    pixels = tf.reduce_prod(header_size(encoded))

    def gif_pixels():
        area, width, height = gif_frames(encoded)
        return tf.reduce_max(tf.stack([pixels, area, width * height]))

    return tf.cond(_starts_with(encoded, b"GIF8"), gif_pixels, lambda: pixels)


def _jpeg_too_short(encoded, pixels):
    """True for a JPEG holding fewer than one byte per `JPEG_PIXELS_PER_BYTE` pixels.

    libjpeg decodes a scan that stops early with only a warning ("premature end
    of data segment") and fills the rest with grey, so a 645-byte file whose
    frame header says 6000 x 6000 decodes to 36 megapixels (2.9 GB in kseq's
    pipeline). The rule: a Huffman-coded JPEG codes every 8 x 8 block of its
    full-resolution component in some scan, and each block costs at least one
    bit (a DC difference of one 1-bit code), so a complete file holds at least
    pixels / 512 bytes. The most compressible files libjpeg writes hold two to
    eight times that (a white 6000 x 6000 grey JPEG, optimised Huffman tables:
    2.0 bits per block; progressive: 3.0). False positives: an arithmetic-coded
    JPEG (rare; it can spend under a bit per block) of a nearly uniform image,
    and a file whose components are subsampled in opposite directions (no
    encoder writes one); both are refused as bad rows. What remains: a row still
    costs up to about 40,000 times its size in memory (80 bytes per pixel), the
    same as a real image of that many pixels.
    """
    return tf.io.is_jpeg(encoded) & (_length(encoded) * JPEG_PIXELS_PER_BYTE < pixels)


def _last(found):
    """The index of the last True of a 1-D bool tensor, or -1 when there is none."""
    flags = tf.cast(tf.reverse(found, [0]), tf.uint8)
    return tf.where(tf.reduce_any(found),
                    tf.cast(tf.size(found), tf.int64) - 1 - tf.argmax(flags, output_type=tf.int64),
                    tf.constant(-1, tf.int64))


def _complete(encoded):
    """A JPEG's last scan is followed by its end marker; a PNG holds its IEND chunk.

    libjpeg decodes a JPEG cut anywhere after its first scan with only a
    warning, showing grey where the data stops: such a file is refused. Bytes
    after the end (a phone's "motion photo" appends a video) are allowed. The
    end marker must come after the last start-of-scan: an embedded EXIF
    thumbnail has an end marker of its own, earlier; inside a scan a 0xFF byte
    is always followed by 0x00, so no marker can be faked there. Other formats
    pass (their decoders refuse a cut file). Memory: a few bytes per input byte.
    """
    data = tf.io.decode_raw(tf.strings.join([encoded, b"\0\0"]), tf.uint8)
    marker = tf.equal(data[:-1], 255)

    def jpeg_end():
        last_scan = _last(marker & tf.equal(data[1:], 0xDA))
        return (last_scan >= 0) & (_last(marker & tf.equal(data[1:], 0xD9)) > last_scan)

    def png_end():
        iend = [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]  # "IEND" and its CRC
        count = tf.maximum(tf.size(data) - len(iend) + 1, 0)
        found = tf.ones([count], tf.bool)
        for offset, byte in enumerate(iend):
            found &= tf.equal(data[offset: offset + count], byte)
        return tf.reduce_any(found)

    return tf.cond(tf.io.is_jpeg(encoded), jpeg_end,
                   lambda: tf.cond(_starts_with(encoded, b"\x89PNG"), png_end,
                                   lambda: tf.constant(True)))


def _first(checks, otherwise):
    """The message of the first `(message, refuses)` whose `refuses()` is True, else
    `otherwise()`; each check runs only when every earlier one passed (`tf.cond`)."""
    if not checks:
        return otherwise()
    (message, refuses), rest = checks[0], checks[1:]
    return tf.cond(refuses(), lambda: tf.constant(message), lambda: _first(rest, otherwise))


def refusal(encoded, max_pixels, max_bytes=DEFAULT_MAX_BYTES):
    """Why one encoded image must not be decoded, as a scalar string; `""` when it may.

    The checks of the module docstring, in its order; each runs only when the
    ones before it passed, so an oversized row costs nothing but its length.
    """
    length = _length(encoded)
    gif = _starts_with(encoded, b"GIF8")

    def by_content():
        pixels = declared_pixels(encoded)
        return _first([("over max_pixels", lambda: pixels > max_pixels),
                       ("a JPEG shorter than its frame", lambda: _jpeg_too_short(encoded, pixels)),
                       ("truncated", lambda: tf.logical_not(_complete(encoded)))],
                      lambda: tf.constant(""))

    return _first([("over max_bytes", lambda: length > max_bytes),
                   ("a GIF over MAX_GIF_BYTES", lambda: gif & (length > MAX_GIF_BYTES)),
                   ("an animated WebP", lambda: animated_webp(encoded))], by_content)
