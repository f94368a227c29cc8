"""What `Captioner.caption()` accepts, as encoded image bytes: files, bytes or uint8 arrays.

The model decodes encoded bytes in its graph (`kseq.data.pipeline.image_decoding`),
exactly as the exported model does, so arrays are encoded to PNG (lossless)
first. Float arrays are refused: whether they hold `[0, 1]` or `[0, 255]`
cannot be told from the values.

Example:
>>> import numpy as np
>>> from kseq.data.pipeline.image_inputs import encoded_images
>>> encoded, names = encoded_images([np.zeros((4, 4, 3), np.uint8), b"\\x89PNG..."])
>>> names, encoded[0][:4]
(['row 1', 'row 2'], b'\\x89PNG')
"""

import os

import numpy as np
import tensorflow as tf

from kseq.errors import KseqError


def _png(array, name):
    if array.dtype != np.uint8:
        raise KseqError(f"Image arrays must be uint8 in [0, 255]; a {array.dtype} array is "
                        f"ambiguous ([0, 1] or [0, 255]?): convert it first, e.g. "
                        f"(x * 255).round().astype('uint8'). Received: {name} of dtype "
                        f"{array.dtype}")
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[-1] not in (1, 3, 4) or 0 in array.shape:
        raise KseqError(f"An image array must be [H, W], [H, W, 1|3|4] or a batch "
                        f"[B, H, W, C]. Received: {name} of shape {array.shape}")
    return tf.io.encode_png(array).numpy()


def encoded_images(images):
    """`images` -> `(encoded bytes list, names)`; a name ("cat.png", "row 3", rows
    counted from 1) for each.

    Args:
        images: a list whose items are file paths, encoded bytes, or uint8 arrays
            `[H, W]` / `[H, W, 1|3|4]`; or one uint8 array `[B, H, W, C]`.

    Raises:
        KseqError: naming the file or row that cannot be read, and for a wrong type.
    """
    if isinstance(images, np.ndarray):
        if images.ndim != 4:
            raise KseqError("One array of images must be a batch [B, H, W, C]; pass a list for "
                            f"single images. Received: an array of shape {images.shape}")
        images = list(images)
    if isinstance(images, (str, bytes, os.PathLike)) or not isinstance(images, (list, tuple)):
        raise KseqError("`images` must be a list (of file paths, encoded bytes or uint8 "
                        f"arrays) or a uint8 array [B, H, W, C]. Received: {type(images).__name__}")
    encoded, names = [], []
    for row, item in enumerate(images, start=1):  # rows named from 1
        if isinstance(item, (str, os.PathLike)):
            name = os.fspath(item)
            try:
                with open(name, "rb") as handle:
                    encoded.append(handle.read())
            except OSError as error:
                raise KseqError(f"Cannot read the image file ({error.strerror}). "
                                f"Received: {name}") from None
        elif isinstance(item, (bytes, bytearray, memoryview)):
            name = getattr(item, "source", None) or f"row {row}"
            encoded.append(bytes(item))
        elif isinstance(item, np.ndarray):
            name = f"row {row}"
            encoded.append(_png(item, name))
        else:
            raise KseqError(f"An image must be a file path, encoded bytes or a uint8 array. "
                            f"Received: row {row} of type {type(item).__name__}")
        names.append(name)
    return encoded, names


IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8", b"GIF8", b"BM", b"RIFF")


def looks_like_an_image(data):
    """True when `data` starts like a PNG, JPEG, GIF, BMP or WebP file."""
    return isinstance(data, bytes) and data.startswith(IMAGE_MAGIC)


class ImageFileBytes(bytes):
    """Encoded image bytes that remember the file they were read from (`source`), so a
    later error about them (it does not decode) can name the file, not a list index."""

    source = None


def read_image_pairs(pairs, folder):
    """`(image path, caption)` pairs of a TSV file -> `(encoded bytes, caption)` pairs.

    Paths are relative to `folder` (the TSV file's own), unless absolute.
    Raises `KseqError` naming the first file that cannot be read. The bytes
    are `ImageFileBytes` naming their file.
    """
    read = []
    for path, caption in pairs:
        full = path if os.path.isabs(path) else os.path.join(folder, path)
        (encoded,), _ = encoded_images([full])
        encoded = ImageFileBytes(encoded)
        encoded.source = full
        read.append((encoded, caption))
    return read
