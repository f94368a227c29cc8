"""Captioners from flat hyper-parameters: an image backbone x a decoder.

`build_captioner(target_tokenizer, encoder=..., decoder=..., **options)` maps a
recipe's `model` section onto an `ImageEncoder` (over a backbone), a decoder
and a `CaptionerPreprocessor`.

- encoders (backbones): those of `kseq.models.encoders.image_encoder_architectures`
  (`"small_cnn"`, `"efficientnet_lite0"`, `keras.applications` names);
- decoders: `"transformer"` (cross-attention over the grid) or `"attention"`
  (GRU/LSTM with Bahdanau or Luong attention, started from the mean feature).
"""

from kseq.arguments import check_choice
from kseq.data.pipeline.image_decoding import DEFAULT_MAX_PIXELS
from kseq.models.captioner import Captioner
from kseq.models.decoders import RnnDecoder, TransformerDecoder
from kseq.models.encoders.image_encoder_architectures import (IMAGE_ENCODERS, build_image_encoder,
                                                     image_size_pair)
from kseq.models.captioner.captioner_preprocessor import CaptionerPreprocessor

ENCODERS = IMAGE_ENCODERS
DECODERS = ("transformer", "attention")


def build_captioner(target_tokenizer, encoder="small_cnn", decoder="transformer",
                    image_size=64, hidden_dim=128, num_layers=2, num_heads=4,
                    intermediate_dim=512, dropout=0.1, max_target_length=24,
                    filters=(32, 64, 128), trainable_backbone=True, backbone_weights="imagenet",
                    cell="gru", attention="bahdanau", embedding_dim=None,
                    max_pixels=DEFAULT_MAX_PIXELS,
                    augmentation=0.0, dtype=None, name="captioner"):
    """A `Captioner` from flat options (see the module docstring).

    `hidden_dim` is the memory width and the Transformer decoder's width (the
    RNN decoder's `units`); `embedding_dim` (default `hidden_dim`) is the RNN
    decoder's token embedding. `backbone_weights` is read by EfficientNet-Lite0
    ("imagenet" or None) and `keras.applications` backbones (None or a file).
    `augmentation` (0 = off) shifts and re-contrasts training images
    (`ImageEncoder`).

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["a red circle"])
    >>> model = kseq.models.build_captioner(tok, decoder="attention", image_size=16,
    ...                                     hidden_dim=8, filters=(8,))
    >>> type(model.decoder).__name__, model.encoder.positions
    ('RnnDecoder', 64)
    """
    check_choice("encoder", encoder, ENCODERS)
    check_choice("decoder", decoder, DECODERS)
    size = image_size_pair(image_size)
    image_encoder = build_image_encoder(encoder, size, hidden_dim, dropout, filters,
                                        trainable_backbone, backbone_weights, augmentation, dtype)
    vocabulary = target_tokenizer.vocabulary_size
    if decoder == "transformer":
        text_decoder = TransformerDecoder(
            vocabulary, num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
            intermediate_dim=intermediate_dim, dropout=dropout, max_length=max_target_length,
            dtype=dtype, name="decoder")
    else:
        text_decoder = RnnDecoder(vocabulary, embedding_dim=embedding_dim or hidden_dim,
                                  units=hidden_dim, cell=cell, attention=attention,
                                  dropout=dropout, dtype=dtype, name="decoder")
    preprocessor = CaptionerPreprocessor(target_tokenizer, size, max_target_length, max_pixels)
    return Captioner(image_encoder, text_decoder, preprocessor, dtype=dtype, name=name)
