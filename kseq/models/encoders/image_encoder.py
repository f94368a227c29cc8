"""`ImageEncoder`: pixels -> the shared memory dict, over a CNN backbone's feature grid.

Shape letters: `B` batch, `H`, `W` image size, `h`, `w` the backbone's grid,
`S = h·w` memory positions, `C` backbone channels, `E` `hidden_dim` (or `C`).
"""

import keras
from keras import ops

from kseq.arguments import check_float, check_int
from kseq.layers.grid_position_embedding import GridPositionEmbedding
from kseq.models.part import Part, store_arguments


@keras.saving.register_keras_serializable(package="kseq")
class ImageEncoder(Part):
    """A backbone's grid, projected to `E`, plus a learned 2-D position signal.

    Each grid cell becomes one memory position (row by row), so a decoder
    attends over the image as a text decoder attends over source tokens:
    `"states"` `[B, S, E]`, `"mask"` (all True) and `"final"`, the mean state,
    which starts an RNN decoder ("Show, Attend and Tell"). The position signal
    is a learned row vector plus a learned column vector, so attention can
    tell "above" from "below". With `hidden_dim=None` the memory is the
    backbone's grid itself (`E = C`: no projection, no position signal), so
    mean pooling and a `Dense` head are exactly an ImageNet classifier's
    global average and fully connected layer.

    Args:
        backbone: an image backbone (`kseq.layers.SmallCnn`,
            `EfficientNetLite0`, `ApplicationBackbone`): pixels in `[0, 255]`
            -> `[B, h, w, C]`, with `feature_grid(image_size)`.
        image_size: `(H, W)` of the input images.
        hidden_dim: `E`, or None: the backbone's `C` channels, unprojected.
        dropout: on the projected states, in training.
        trainable_backbone: False freezes the backbone (its batch norm too):
            only the projection and the decoder learn.
        augmentation: in training only, shift images by up to this share of
            their side (the margin filled white) and change their contrast by
            up to this factor; 0 turns it off. Do not flip: "left of" would lie.

    Call arguments:
        pixels: `[B, H, W, 3]` uint8 (or float in `[0, 255]`).
        training: dropout and batch norm on or off.

    Returns:
        `{"states": [B, S, E], "mask": [B, S] bool, "final": [B, E]}`.

    Example:
    >>> import numpy as np, kseq
    >>> encoder = kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn((8, 8)), (16, 16),
    ...                                             hidden_dim=12)
    >>> memory = encoder(np.zeros((2, 16, 16, 3), "uint8"))
    >>> tuple(memory["states"].shape), tuple(memory["final"].shape)
    ((2, 16, 12), (2, 12))
    >>> raw = kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn((8, 8)), (16, 16),
    ...                                         hidden_dim=None)
    >>> tuple(raw(np.zeros((1, 16, 16, 3), "uint8"))["states"].shape), raw.width
    ((1, 16, 8), 8)
    """

    CONFIG = ("image_size", "hidden_dim", "dropout", "trainable_backbone", "augmentation")

    def __init__(self, backbone, image_size, hidden_dim=128, dropout=0.0,
                 trainable_backbone=True, augmentation=0.0, **kwargs):
        super().__init__(**kwargs)
        image_size = [check_int("image_size", side) for side in image_size]
        if hidden_dim is not None:
            check_int("hidden_dim", hidden_dim)
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        check_float("augmentation", augmentation, minimum=0.0, maximum=0.5)
        store_arguments(self, locals())
        self.backbone = backbone
        # Keras ignores setting `trainable` to the value a layer already has, so a backbone
        # rebuilt from a config saying trainable=False would keep trainable sublayers (and
        # a loaded model an optimizer over them): set it the other way first.
        backbone.trainable = not trainable_backbone
        backbone.trainable = bool(trainable_backbone)
        self.grid = tuple(backbone.feature_grid(image_size))
        # === Layers ===
        dtype, name = self.dtype_policy, self.name
        self.projection = self.position_embedding = None  # hidden_dim=None: the raw grid
        if hidden_dim is not None:
            self.projection = keras.layers.Dense(hidden_dim, dtype=dtype,
                                                 name=f"{name}_projection")
            self.position_embedding = GridPositionEmbedding(dtype=dtype,
                                                            name=f"{name}_position_embedding")
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=dtype, name=f"{name}_dropout")
        self.augmentation_layers = [] if not augmentation else [
            keras.layers.RandomTranslation(augmentation, augmentation, fill_mode="constant",
                                           fill_value=255.0, dtype=dtype,
                                           name=f"{name}_random_shift"),
            keras.layers.RandomContrast(augmentation, value_range=(0, 255), dtype=dtype,
                                        name=f"{name}_random_contrast")]

    @property
    def width(self):
        """`E`, the memory's width: `hidden_dim`, or the backbone's channels."""
        return self.backbone.output_channels if self.hidden_dim is None else self.hidden_dim

    @property
    def positions(self):
        """`S`, the memory length."""
        return self.grid[0] * self.grid[1]

    def backbone_features(self, pixels, training=None):
        """`[B, H, W, 3]` pixels -> the backbone's grid `[B, h, w, C]`.

        A frozen backbone runs in inference mode (its batch norm statistics
        kept: Keras's fine-tuning rule), so its features are a function of the
        image alone and can be computed once (`Captioner.cached_features`).
        """
        return self.backbone(pixels, training=training if self.trainable_backbone else False)

    def memory_from_features(self, features, training=None):
        """The backbone's grid `[B, h, w, C]` -> the memory dict (projection, positions)."""
        height, width = self.grid
        states = features  # [B, h, w, C]; with hidden_dim=None, E = C
        if self.projection is not None:
            states = self.position_embedding(self.projection(features))  # [B, h, w, E]
        states = ops.reshape(states, (-1, height * width, self.width))
        states = self.dropout_layer(states, training=training)  # [B, S, E]
        mask = ops.ones_like(states[:, :, 0], dtype="bool")  # [B, S]
        return {"states": states, "mask": mask, "final": ops.mean(states, axis=1)}

    def augment(self, pixels, training=None):
        """Random shifts and contrast in training (see `augmentation`); pixels else."""
        if not self.augmentation_layers:
            return pixels
        pixels = ops.cast(pixels, "float32")
        for layer in self.augmentation_layers:
            pixels = layer(pixels, training=training)
        return pixels

    def call(self, pixels, training=None):
        pixels = self.augment(pixels, training)
        return self.memory_from_features(self.backbone_features(pixels, training), training)

    def get_config(self):
        return {**super().get_config(), "image_size": list(self.image_size),
                "backbone": keras.saving.serialize_keras_object(self.backbone)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        return cls(**config)
