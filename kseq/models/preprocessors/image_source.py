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
        """Refuses, naming the rows, training images that are not encoded or do not decode."""
        for row, image in enumerate(images):
            if not looks_like_an_image(image):
                raise KseqError(f"Row {row}: an image model trains on encoded image bytes (PNG, "
                                f"JPEG, GIF, BMP, WebP); read files first (a TSV for `kseq "
                                f"train --data` holds `image path<TAB>target` lines). "
                                f"Received: {image!r:.60}")
        bad = self.undecodable(list(images))  # decoded once here: a cut file fails now
        if bad:
            raise KseqError(f"{len(bad)} training image(s) do not decode (truncated, or over "
                            f"max_pixels={self.max_pixels}). Received: rows "
                            f"{', '.join(map(str, bad[:10]))}" + (" ..." if len(bad) > 10 else ""))

    def warmup_images(self):
        """A white image and a noise image as PNG bytes (fixed seed), for TF Serving's warm-up."""
        height, width = self.image_size
        noise = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
        white = np.full((height, width, 3), 255, np.uint8)
        return [tf.io.encode_png(image).numpy() for image in (white, noise)]
