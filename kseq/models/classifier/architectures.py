"""Sequence classifiers from flat hyper-parameters: an encoder x a pooling.

`build_classifier(tokenizer, label_names, encoder=..., pooling=..., **options)`
maps a recipe's `model` section onto an encoder, a preprocessor and a
`SequenceClassifier`. Text encoders (with a `ClassifierPreprocessor`):

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
None): those of `kseq.models.encoders.image_encoder_architectures` (`"small_cnn"`,
`"efficientnet_lite0"`, `keras.applications` names) with `image_size`,
`hidden_dim`, `filters`, `trainable_backbone`, `backbone_weights`,
`augmentation`, `max_pixels`.
"""

from kseq.arguments import check_choice
from kseq.data.pipeline.image_decoding import DEFAULT_MAX_PIXELS
from kseq.errors import KseqError
from kseq.layers.sequence_pooling import POOLINGS
from kseq.models.encoders import (ConvEncoder, NgramEncoder, RnnEncoder, TextCnnEncoder,
                                  TransformerEncoder)
from kseq.models.encoders.image_encoder_architectures import (IMAGE_ENCODERS, build_image_encoder,
                                                     image_size_pair)
from kseq.models.classifier.classifier_preprocessor import ClassifierPreprocessor
from kseq.models.classifier.image_classifier_preprocessor import ImageClassifierPreprocessor
from kseq.models.classifier.sequence_classifier import SequenceClassifier

TEXT_ENCODERS = ("transformer", "rnn", "conv", "ngrams", "textcnn")
CLASSIFIER_ENCODERS = TEXT_ENCODERS + IMAGE_ENCODERS


def text_encoder(kind, vocabulary, max_length, dropout, dtype, num_layers=None, num_heads=4,
                 hidden_dim=128, intermediate_dim=None, cell="gru", units=None,
                 embedding_dim=None, bidirectional=True, kernel_size=3, ngram_buckets=50_000,
                 kernel_sizes=(3, 4, 5), filters=100):
    """The text encoder `kind` (see the module docstring), named "encoder"."""
    if kind == "textcnn":
        return TextCnnEncoder(vocabulary, embedding_dim=embedding_dim or hidden_dim,
                              kernel_sizes=kernel_sizes, filters=filters, dropout=dropout,
                              dtype=dtype, name="encoder")
    if kind == "ngrams":
        return NgramEncoder(vocabulary, embedding_dim=embedding_dim or hidden_dim,
                            ngram_buckets=ngram_buckets, dropout=dropout, dtype=dtype,
                            name="encoder")
    if kind == "transformer":
        return TransformerEncoder(vocabulary, num_layers=num_layers or 2, num_heads=num_heads,
                                  hidden_dim=hidden_dim,
                                  intermediate_dim=intermediate_dim or 4 * hidden_dim,
                                  dropout=dropout, max_length=max_length, dtype=dtype,
                                  name="encoder")
    if kind == "rnn":
        return RnnEncoder(vocabulary, embedding_dim=embedding_dim or hidden_dim,
                          units=units or hidden_dim, cell=cell, num_layers=num_layers or 1,
                          bidirectional=bidirectional, dropout=dropout, dtype=dtype,
                          name="encoder")
    return ConvEncoder(vocabulary, num_layers=num_layers or 4,
                       embedding_dim=embedding_dim or hidden_dim, hidden_dim=hidden_dim,
                       kernel_size=kernel_size, dropout=dropout, max_length=max_length,
                       dtype=dtype, name="encoder")


def image_classifier_parts(label_names, encoder, image_size=64,
                           max_pixels=DEFAULT_MAX_PIXELS, dropout=0.1, dtype=None,
                           **encoder_options):
    """`(ImageEncoder, ImageClassifierPreprocessor)` for an image classifier."""
    size = image_size_pair(image_size)
    encoder_part = build_image_encoder(encoder, size, dropout=dropout, dtype=dtype,
                                       **encoder_options)
    return encoder_part, ImageClassifierPreprocessor(label_names, size, max_pixels)


def build_classifier(tokenizer, label_names, encoder="transformer", pooling="mean",
                     max_length=128, dropout=0.1, dtype=None, name="classifier",
                     **encoder_options):
    """A `SequenceClassifier` from flat options (see the module docstring).

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
    check_choice("encoder", encoder, CLASSIFIER_ENCODERS)
    check_choice("pooling", pooling, POOLINGS)
    if pooling == "last" and encoder != "rnn":
        raise KseqError("pooling='last' reads an RNN's final states: use encoder='rnn', or "
                        f"pooling 'mean', 'max' or 'attention'. Received: encoder={encoder!r}")
    if encoder in IMAGE_ENCODERS:
        encoder_part, preprocessor = image_classifier_parts(label_names, encoder,
                                                            dropout=dropout, dtype=dtype,
                                                            **encoder_options)
    else:
        encoder_part = text_encoder(encoder, tokenizer.vocabulary_size, max_length, dropout,
                                    dtype, **encoder_options)
        preprocessor = ClassifierPreprocessor(tokenizer, label_names, max_length)
    return SequenceClassifier(encoder_part, preprocessor, pooling=pooling, dropout=dropout,
                              dtype=dtype, name=name)
