"""`ImageSource`: encoded images -> pixels, the input side of every image task's preprocessor."""

import numpy as np
import tensorflow as tf

from kseq.data.pipeline.image_decoding import decode_rows
from kseq.data.pipeline.image_inputs import encoded_images, looks_like_an_image
from kseq.errors import KseqError

CHECK_CHUNK = 64  # images decoded at a time when checking: bounded memory


class ImageSource:
    """The image side of a preprocessor (a mixin over `image_size` and `max_pixels`).

    Images are encoded bytes (PNG, JPEG, GIF, BMP, WebP), decoded, composited
    on white and letterboxed to `image_size` by `kseq.data.pipeline.image_decoding` —
    the same function in training, prediction and the exported model. A row
    that does not decode (empty, not an image, truncated, over `max_pixels`)
    is white with `valid` False.
    """

    input_kind = "images"
    # Decoded images of a real training set do not fit in memory: decode them every epoch.
    cache_examples = False

    @property
    def input_signature(self):
        """A model's input: pixels `[B, H, W, 3]` uint8."""
        return [tf.TensorSpec([None, *self.image_size, 3], tf.uint8, name="images")]

    def images(self, encoded):
        """`[B]` encoded images -> `(pixels [B, H, W, 3] uint8, valid [B] bool)`."""
        return decode_rows(encoded, self.image_size, self.max_pixels)

    def inference_inputs(self, encoded):
        """`[B]` encoded images -> `{"images", "valid", "empty" (= not valid), "truncated"}`."""
        images, valid = self.images(encoded)
        return {"images": images, "valid": valid, "empty": tf.logical_not(valid),
                "truncated": tf.zeros_like(valid)}

    def undecodable(self, encoded):
        """Indices of the encoded images (a list of bytes) that do not decode."""
        bad = []
        for begin in range(0, len(encoded), CHECK_CHUNK):
            _, valid = self.images(tf.constant(encoded[begin:begin + CHECK_CHUNK], tf.string))
            bad += [begin + int(i) for i in np.flatnonzero(~valid.numpy())]
        return bad

    def encode_inputs(self, images):
        """Files, bytes or uint8 arrays -> encoded bytes; `KseqError` naming a bad one."""
        encoded, names = encoded_images(images)
        bad = [names[i] for i in self.undecodable(encoded)]
        if bad:
            raise KseqError(
                f"{len(bad)} image(s) could not be decoded (not PNG/JPEG/GIF/BMP/WebP, "
                f"empty, truncated, or over max_pixels={self.max_pixels}). "
                f"Received: {', '.join(bad[:5])}" + (" ..." if len(bad) > 5 else ""))
        return encoded

    def check_training_images(self, images):
        """Refuses, naming them, training images that are not encoded or do not decode: by
        file for images read from a TSV (`ImageFileBytes`), else by row (from 1)."""
        images = list(images)
        name = lambda row: getattr(images[row], "source", None) or f"row {row + 1}"
        for row, image in enumerate(images):
            if not looks_like_an_image(image):
                found = repr(bytes(image[:40])) if isinstance(image, bytes) else \
                    f"a {type(image).__name__}"
                if getattr(image, "source", None):  # a path of a data file: the file is wrong
                    raise KseqError(f"An image model trains on image files (PNG, JPEG, GIF, "
                                    f"BMP, WebP); this file of the training data is none of "
                                    f"them: replace it or remove its line. "
                                    f"Received: {image.source} = {found}")
                raise KseqError(f"An image model trains on encoded image bytes (PNG, JPEG, "
                                f"GIF, BMP, WebP): read image files into bytes first, or give "
                                f"`kseq train --data` a TSV of `image path<TAB>target` lines. "
                                f"Received: {name(row)} = {found}")
        bad = self.undecodable(images)  # decoded once here: a cut file fails now
        if bad:
            raise KseqError(f"{len(bad)} training image(s) do not decode (truncated, or over "
                            f"max_pixels={self.max_pixels}). Received: "
                            f"{', '.join(name(row) for row in bad[:10])}"
                            + (" ..." if len(bad) > 10 else ""))

    def warmup_images(self):
        """A white image and a noise image as PNG bytes (fixed seed), for TF Serving's warm-up."""
        height, width = self.image_size
        noise = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
        white = np.full((height, width, 3), 255, np.uint8)
        return [tf.io.encode_png(image).numpy() for image in (white, noise)]
