"""`ImageClassifierPreprocessor`: encoded images -> pixels, label names <-> class ids."""

import keras
import tensorflow as tf

from kseq.arguments import check_int
from kseq.data.pipeline.image_decoding import DEFAULT_MAX_PIXELS
from kseq.models.preprocessors.class_labels import ClassLabels
from kseq.models.preprocessors.image_source import ImageSource
from kseq.models.preprocessors.preprocessor import Preprocessor


def _one_bucket(features, labels):
    """Every image is as long as every other: one bucket, `batch_size` images a batch."""
    return tf.constant(1, tf.int32)


@keras.saving.register_keras_serializable(package="kseq")
class ImageClassifierPreprocessor(ImageSource, ClassLabels, Preprocessor):
    """Decodes images with the one image function and maps label names to class ids.

    The image side is `ImageSource`'s (the same decoding, compositing on white
    and letterboxing as the captioner, in training, `predict_labels` and the
    exported model); the label side is `ClassLabels`'s. A training image that
    does not decode gets label -1 (padding: it adds nothing to the loss); given
    as a list, such images are refused before anything trains, naming the rows.

    Args:
        label_names: the classes, in id order.
        image_size: `(H, W)` the model sees.
        max_pixels: larger images (read from their header) are refused.

    Example:
    >>> import numpy as np, tensorflow as tf, kseq
    >>> pre = kseq.models.ImageClassifierPreprocessor(["circle", "square"], (8, 8))
    >>> png = tf.io.encode_png(np.zeros((3, 5, 3), np.uint8))
    >>> features, labels = pre(tf.stack([png, b"junk"]), tf.constant(["square", "square"]))
    >>> features["images"].shape, labels.numpy().tolist()  # the bad row: padding
    (TensorShape([2, 8, 8, 3]), [1, -1])
    """

    example_length = staticmethod(_one_bucket)

    def __init__(self, label_names, image_size, max_pixels=DEFAULT_MAX_PIXELS):
        self.set_label_names(label_names)
        self.image_size = tuple(check_int("image_size", side) for side in image_size)
        self.max_pixels = check_int("max_pixels", max_pixels)

    def __call__(self, encoded, labels):
        """Batched: `[B]` encoded images and `[B]` labels -> `{"images"}` and class ids."""
        images, valid = self.images(encoded)
        return {"images": images}, tf.where(valid, self.label_ids(labels), -1)

    def to_dataset(self, data):
        """`(encoded image, label)` pairs (a list: images and labels checked, naming the
        first bad row) or a dataset of them (passed through as is)."""
        if isinstance(data, tf.data.Dataset):
            return data
        data = list(data)
        ids = self.check_labels([label for _, label in data])
        self.check_training_images([image for image, _ in data])
        images = tf.constant([image for image, _ in data], tf.string)
        return tf.data.Dataset.from_tensor_slices((images, tf.constant(ids, tf.int32)))

    def get_config(self):
        return {"label_names": list(self.label_names), "image_size": list(self.image_size),
                "max_pixels": self.max_pixels}
