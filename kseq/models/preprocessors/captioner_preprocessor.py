"""`CaptionerPreprocessor`: encoded images -> pixels, captions <-> ids, for training,
search and serving."""

import keras
import tensorflow as tf

from kseq.arguments import check_int
from kseq.data.image_decoding import DEFAULT_MAX_PIXELS, decode_rows
from kseq.data.image_inputs import looks_like_an_image
from kseq.errors import KseqError
from kseq.models.preprocessors.preprocessor import Preprocessor
from kseq.models.preprocessors.text_targets import TextTargets
from kseq.text import tokenizer_from_config


@keras.saving.register_keras_serializable(package="kseq")
class CaptionerPreprocessor(TextTargets, Preprocessor):
    """Decodes images with the one image function and tokenises captions.

    Images are encoded bytes (PNG, JPEG, GIF, BMP, WebP), decoded, composited
    on white and letterboxed to `image_size` by `kseq.data.image_decoding` —
    the same function in training, `caption()` and the exported model. A row
    that does not decode (empty, not an image, truncated, over `max_pixels`)
    is white with `valid` False; in training its labels are all padding, so it
    adds nothing to the loss.

    Args:
        target_tokenizer: the caption tokenizer (`kseq.text`).
        image_size: `(H, W)` the model sees.
        max_target_length: longest decoder input or label, with `<s>`/`</s>`.
        max_pixels: larger images (read from their header) are refused.

    Example:
    >>> import numpy as np, tensorflow as tf, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["a red circle"])
    >>> pre = kseq.models.CaptionerPreprocessor(tok, (8, 8), 8)
    >>> png = tf.io.encode_png(np.zeros((3, 5, 3), np.uint8))
    >>> features, labels = pre(tf.stack([png, b"junk"]), tf.constant(["a red circle"] * 2))
    >>> features["images"].shape, labels.to_list()[1]  # the bad row: all padding
    (TensorShape([2, 8, 8, 3]), [0, 0, 0, 0])
    """

    def __init__(self, target_tokenizer, image_size, max_target_length,
                 max_pixels=DEFAULT_MAX_PIXELS):
        self.target_tokenizer = target_tokenizer
        self.image_size = tuple(check_int("image_size", side) for side in image_size)
        self.max_target_length = check_int("max_target_length", max_target_length, minimum=2)
        self.max_pixels = check_int("max_pixels", max_pixels)

    @property
    def input_signature(self):
        """The search's input: pixels `[B, H, W, 3]` uint8."""
        return [tf.TensorSpec([None, *self.image_size, 3], tf.uint8, name="images")]

    def images(self, encoded):
        """`[B]` encoded images -> `(pixels [B, H, W, 3] uint8, valid [B] bool)`."""
        return decode_rows(encoded, self.image_size, self.max_pixels)

    def __call__(self, encoded, captions):
        """Batched: `[B]` encoded images and `[B]` captions -> features and labels."""
        images, valid = self.images(encoded)
        decoder_ids, labels = self.target_ids(captions)
        # An image that does not decode teaches nothing: its labels become padding.
        labels = tf.ragged.map_flat_values(tf.math.multiply, labels, tf.cast(
            tf.gather(valid, labels.value_rowids()), labels.dtype))
        return {"images": images, "decoder_ids": decoder_ids}, labels

    def inference_inputs(self, encoded):
        """`[B]` encoded images -> `{"images", "valid", "empty" (= not valid), "truncated"}`."""
        images, valid = self.images(encoded)
        return {"images": images, "valid": valid, "empty": tf.logical_not(valid),
                "truncated": tf.zeros_like(valid)}

    def padded_widths(self):
        target = self.max_target_length
        return {"decoder_ids": target}, target  # images keep their shape

    def to_dataset(self, data):
        """`(encoded image, caption)` pairs (a list: every image checked, a bad one refused
        naming its row) or a dataset of them (passed through as is)."""
        if isinstance(data, tf.data.Dataset):
            return data
        data = list(data)
        for row, (image, _) in enumerate(data):
            if not looks_like_an_image(image):
                raise KseqError(f"Row {row}: a captioner trains on encoded image bytes (PNG, "
                                f"JPEG, GIF, BMP, WebP); read files first (a TSV for `kseq "
                                f"train --data` holds `image path<TAB>caption` lines). "
                                f"Received: {image!r:.60}")
        bad = []
        for begin in range(0, len(data), 256):  # decoded once here: a cut file fails now
            chunk = tf.constant([image for image, _ in data[begin:begin + 256]], tf.string)
            bad += [begin + int(i) for i in tf.where(~self.images(chunk)[1])[:, 0].numpy()]
        if bad:
            raise KseqError(f"{len(bad)} training image(s) do not decode (truncated, or over "
                            f"max_pixels={self.max_pixels}). Received: rows "
                            f"{', '.join(map(str, bad[:10]))}" + (" ..." if len(bad) > 10 else ""))
        images = tf.constant([image for image, _ in data], tf.string)
        captions = tf.constant([caption for _, caption in data], tf.string)
        return tf.data.Dataset.from_tensor_slices((images, captions))

    def get_config(self):
        return {"target_tokenizer": self.target_tokenizer.get_config(),
                "image_size": list(self.image_size), "max_target_length": self.max_target_length,
                "max_pixels": self.max_pixels}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["target_tokenizer"] = tokenizer_from_config(config["target_tokenizer"])
        return cls(**config)
