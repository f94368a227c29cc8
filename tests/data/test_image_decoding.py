"""The one image function: every format, the header size check, bad rows, letterboxing."""

import io

import numpy as np
import pytest
import tensorflow as tf

from kseq.data.pipeline.image_decoding import decode_rows, header_size

RGBA = np.zeros((5, 7, 4), np.uint8)
RGBA[..., 0], RGBA[..., 3] = 200, 128  # half-transparent red


def pillow(fmt, array, mode, **options):
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(array, mode).save(buffer, fmt, **options)
    return buffer.getvalue()


FORMATS = {
    "png rgba": (lambda: tf.io.encode_png(RGBA).numpy(), [227, 127, 127]),
    "png grey": (lambda: pillow("PNG", RGBA[..., 0], "L"), [200, 200, 200]),
    "png grey+alpha": (lambda: pillow("PNG", RGBA[..., [0, 3]], "LA"), [227, 227, 227]),
    "jpeg": (lambda: tf.io.encode_jpeg(RGBA[..., :3], quality=100).numpy(), [200, 0, 0]),
    "gif": (lambda: pillow("GIF", RGBA[..., :3], "RGB"), [200, 0, 0]),
    "bmp": (lambda: pillow("BMP", RGBA[..., :3], "RGB"), [200, 0, 0]),
    "bmp rgba": (lambda: pillow("BMP", RGBA, "RGBA"), [227, 127, 127]),
    "webp lossy rgb": (lambda: pillow("WEBP", RGBA[..., :3], "RGB", quality=100), None),
    "webp lossless rgba": (lambda: pillow("WEBP", RGBA, "RGBA", lossless=True), [227, 127, 127]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_decodes_with_its_header_size_and_alpha_on_white(name):
    make, centre = FORMATS[name]
    encoded = make()
    assert header_size(tf.constant(encoded)).numpy().tolist() == [5, 7]
    images, valid = decode_rows(tf.constant([encoded]), (5, 7))
    assert valid.numpy().tolist() == [True]
    if centre is not None:  # lossy WebP shifts colours a little
        np.testing.assert_allclose(images.numpy()[0, 2, 3], centre, atol=3)
    _, refused = decode_rows(tf.constant([encoded]), (5, 7), max_pixels=34)
    assert refused.numpy().tolist() == [False]  # 35 pixels: over the limit, not decoded


def test_top_down_bmp_reads_its_height():
    from PIL import Image

    encoded = bytearray(pillow("BMP", RGBA[..., :3], "RGB"))
    encoded[22:26] = (-5).to_bytes(4, "little", signed=True)  # the same rows, top-down
    assert header_size(tf.constant(bytes(encoded))).numpy().tolist() == [5, 7]
    assert Image.open(io.BytesIO(bytes(encoded))).size == (7, 5)


@pytest.mark.slow
def test_bad_rows_and_trailing_bytes():
    png = tf.io.encode_png(RGBA).numpy()
    jpeg = tf.io.encode_jpeg(RGBA[..., :3]).numpy()
    rows = {"png": png, "png + trailing": png + b"\0\0junk", "jpeg + motion video": jpeg + b"ftypmp4",
            "png cut": png[:-20], "jpeg cut": jpeg[:-2], "jpeg half": jpeg[: len(jpeg) // 2],
            "empty": b"", "junk": b"not an image", "gif magic only": b"GIF89a"}
    _, valid = decode_rows(tf.constant(list(rows.values())), (8, 8))
    assert dict(zip(rows, valid.numpy().tolist())) == {
        "png": True, "png + trailing": True, "jpeg + motion video": True, "png cut": False,
        "jpeg cut": False, "jpeg half": False, "empty": False, "junk": False,
        "gif magic only": False}


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(1, 200), (300, 2), (1, 1), (64, 64)])
def test_letterbox_keeps_the_aspect_on_white(shape):
    pixels = np.zeros((*shape, 3), np.uint8)  # black
    images, valid = decode_rows(tf.constant([tf.io.encode_png(pixels).numpy()]), (16, 16))
    image = images.numpy()[0]
    assert valid.numpy().tolist() == [True]
    dark = (image < 128).all(axis=-1)
    rows, columns = np.nonzero(dark)
    assert dark.any() and (image[~dark] > 100).all()  # the rest is white (or anti-aliased)
    height, width = rows.max() - rows.min() + 1, columns.max() - columns.min() + 1
    if shape[0] < shape[1]:
        assert width == 16 and height <= 2
    elif shape[0] > shape[1]:
        assert height == 16 and width <= 2


def test_eager_calls_and_a_traced_graph_decode_alike():
    png = tf.io.encode_png(RGBA).numpy()
    # Eagerly: a Python list, numpy integers for the size; one trace serves both calls.
    listed, listed_valid = decode_rows([png, b"junk"], [np.int64(5), np.int64(7)])
    again, _ = decode_rows(np.array([png, b"junk"], object), (5, 7))
    np.testing.assert_array_equal(listed.numpy(), again.numpy())
    traced, traced_valid = tf.function(lambda rows: decode_rows(rows, (5, 7)))(
        tf.constant([png, b"junk"]))
    np.testing.assert_array_equal(listed.numpy(), traced.numpy())
    assert listed_valid.numpy().tolist() == traced_valid.numpy().tolist() == [True, False]
    with pytest.raises(TypeError):
        decode_rows([png], (5.5, 7))
