"""`CaptionerPreprocessor`: encoded images -> pixels, captions <-> ids, for training,
search and serving."""

import keras
import tensorflow as tf

from kseq.arguments import check_int
from kseq.data.pipeline.image_decoding import DEFAULT_MAX_PIXELS
from kseq.models.preprocessors.image_source import ImageSource
from kseq.models.preprocessors.preprocessor import Preprocessor
from kseq.models.preprocessors.text_targets import TextTargets
from kseq.text import tokenizer_from_config


@keras.saving.register_keras_serializable(package="kseq")
class CaptionerPreprocessor(ImageSource, TextTargets, Preprocessor):
    """Decodes images with the one image function and tokenises captions.

    Images are encoded bytes (PNG, JPEG, GIF, BMP, WebP), decoded, composited
    on white and letterboxed to `image_size` by `kseq.data.pipeline.image_decoding` —
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

    def __call__(self, encoded, captions):
        """Batched: `[B]` encoded images and `[B]` captions -> features and labels."""
        images, valid = self.images(encoded)
        decoder_ids, labels = self.target_ids(captions)
        # An image that does not decode teaches nothing: its labels become padding.
        labels = tf.ragged.map_flat_values(tf.math.multiply, labels, tf.cast(
            tf.gather(valid, labels.value_rowids()), labels.dtype))
        return {"images": images, "decoder_ids": decoder_ids}, labels

    def padded_widths(self):
        target = self.max_target_length
        return {"decoder_ids": target}, target  # images keep their shape

    def to_dataset(self, data):
        """`(encoded image, caption)` pairs (a list: every image checked, a bad one refused
        naming its row) or a dataset of them (passed through as is)."""
        if isinstance(data, tf.data.Dataset):
            return data
        data = list(data)
        self.check_training_images([image for image, _ in data])
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
