"""Sequence classifiers from flat hyper-parameters: an encoder (from the part catalog) x a pooling.

`build_classifier(tokenizer, label_names, encoder=..., pooling=..., **options)`
maps a recipe's `model` section onto an encoder (built by its
`kseq.models.part_catalog` factory from the options it takes), a
preprocessor and a `SequenceClassifier`. Text encoders (with a
`ClassifierPreprocessor`):

- `"transformer"`: `TransformerEncoder` (`num_layers`, `num_heads`,
  `hidden_dim`, `intermediate_dim`);
- `"rnn"`: `RnnEncoder` (`cell`, `units`, `embedding_dim`, `num_layers`,
  `bidirectional`); `pooling="last"` reads its final states;
- `"conv"`: `ConvEncoder` (`num_layers`, `embedding_dim`, `hidden_dim`, `kernel_size`);
- `"ngrams"`: `NgramEncoder`, a bag of words and hashed word pairs
  (`embedding_dim`, `ngram_buckets`); no order beyond the pair;
- `"textcnn"`: `TextCnnEncoder`, Kim's (2014) parallel convolutions of several
  widths (`embedding_dim`, `kernel_sizes`, `filters`); use `pooling="max"`.

Image encoders (with an `ImageClassifierPreprocessor`; no tokenizer: pass
None): the catalog's image encoders (`"small_cnn"`, `"efficientnet_lite0"`,
`keras.applications` names; `kseq.models.encoders.image_encoder_architectures`)
with `image_size`, `hidden_dim`, `filters`, `trainable_backbone`,
`backbone_weights`, `augmentation`, `max_pixels`.

`head_weights="imagenet"` gives the head the 1,000-class ImageNet classifier of
the EfficientNet-Lite0 checkpoint: with `encoder="efficientnet_lite0"`,
`backbone_weights="imagenet"`, `hidden_dim=None` (the backbone's 1280-wide grid,
unprojected) and `pooling="mean"` (its global average), the model is the
checkpoint's ImageNet classifier; `label_names` must then be its 1,000 classes
in the checkpoint's order (the preset `imagenet_lite0_classifier` holds them).
"""

from kseq.arguments import check_choice
from kseq.data.pipeline.image_decoding import DEFAULT_MAX_PIXELS
from kseq.errors import KseqError
from kseq.layers.efficientnet_lite0 import CLASSES, EfficientNetLite0
from kseq.layers.sequence_pooling import POOLINGS
from kseq.models.classifier.classifier_preprocessor import ClassifierPreprocessor
from kseq.models.classifier.image_classifier_preprocessor import ImageClassifierPreprocessor
from kseq.models.classifier.sequence_classifier import SequenceClassifier
from kseq.models.encoders.image_encoder_architectures import image_size_pair
from kseq.models.part_catalog import encoder_entry, encoder_names, split_options

TEXT_ENCODERS = encoder_names("text")
CLASSIFIER_ENCODERS = TEXT_ENCODERS + encoder_names("image")
# Where a classifier's defaults differ from the catalog's (a conv encoder 128 wide, like the rest).
DEFAULTS = {"hidden_dim": 128}


def build_classifier(tokenizer, label_names, encoder="transformer", pooling="mean",
                     max_length=128, image_size=64, max_pixels=DEFAULT_MAX_PIXELS, dropout=0.1,
                     dtype=None, name="classifier", head_weights=None, **options):
    """A `SequenceClassifier` from flat options (see the module docstring).

    `max_length` (tokens) is a text classifier's, `image_size` and
    `max_pixels` an image classifier's; `head_weights` None (random) or
    "imagenet" (see the module docstring); `**options` are the encoder's (one
    that no part takes raises `TypeError`).

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["great film"])
    >>> model = kseq.models.build_classifier(tok, ["negative", "positive"], encoder="rnn",
    ...                                      pooling="last", hidden_dim=8)
    >>> model.predict_labels([""])  # no token: no label
    [('', 0.0)]
    >>> images = kseq.models.build_classifier(None, ["circle", "square"], encoder="small_cnn",
    ...                                       image_size=16, hidden_dim=8, filters=[8])
    >>> images.input_name, images.preprocessor.image_size
    ('images', (16, 16))
    """
    part = encoder_entry(encoder, CLASSIFIER_ENCODERS)
    check_choice("pooling", pooling, POOLINGS)
    if pooling == "last" and encoder != "rnn":
        raise KseqError("pooling='last' reads an RNN's final states: use encoder='rnn', or "
                        f"pooling 'mean', 'max' or 'attention'. Received: encoder={encoder!r}")
    size = image_size_pair(image_size)
    [encoder_options] = split_options(
        options, [part], fixed=[{"max_length": max_length, "image_size": size,
                                 "dropout": dropout}], defaults=DEFAULTS)
    if part.kind == "image":
        encoder_part = part.build(None, dtype=dtype, **encoder_options)
        preprocessor = ImageClassifierPreprocessor(label_names, size, max_pixels)
    else:
        encoder_part = part.build(tokenizer.vocabulary_size, dtype=dtype, **encoder_options)
        preprocessor = ClassifierPreprocessor(tokenizer, label_names, max_length)
    model = SequenceClassifier(encoder_part, preprocessor, pooling=pooling, dropout=dropout,
                               dtype=dtype, name=name)
    if head_weights is not None:
        load_imagenet_head(model, head_weights)
    return model


def load_imagenet_head(model, head_weights):
    """Sets the head of an ImageNet Lite0 classifier (`model`) to the checkpoint's
    classifier; `KseqError` for a model whose head could not be it."""
    from kseq.layers.pretrained.lite0_weights import lite0_imagenet_classifier

    if head_weights != "imagenet":
        raise KseqError(f"`head_weights` must be None or 'imagenet'. "
                        f"Received: head_weights={head_weights!r}")
    backbone = getattr(model.encoder, "backbone", None)
    setup = {"encoder": type(backbone).__name__,
             "backbone_weights": getattr(backbone, "weights_file", None),
             "hidden_dim": model.encoder.hidden_dim, "pooling": model.pooling,
             "classes": model.preprocessor.num_classes}
    wanted = {"encoder": "EfficientNetLite0", "backbone_weights": "imagenet",
              "hidden_dim": None, "pooling": "mean", "classes": CLASSES}
    if not isinstance(backbone, EfficientNetLite0) or setup != wanted:
        raise KseqError(f"head_weights='imagenet' is the ImageNet head of EfficientNet-Lite0: "
                        f"it needs encoder='efficientnet_lite0', backbone_weights='imagenet', "
                        f"hidden_dim=None, pooling='mean' and {CLASSES} label_names. "
                        f"Received: {setup}")
    model.head.set_weights(list(lite0_imagenet_classifier(EfficientNetLite0)))
