"""Captioners from flat hyper-parameters: an image encoder x a decoder, from the part catalog.

`build_captioner(target_tokenizer, encoder=..., decoder=..., **options)` maps a
recipe's `model` section onto an image encoder and a decoder (each built by
its `kseq.models.part_catalog` factory from the options it takes) and a
`CaptionerPreprocessor`.

- encoders: the catalog's image encoders (`"small_cnn"`, `"efficientnet_lite0"`,
  `keras.applications` names; see `kseq.models.encoders.image_encoder_architectures`);
- decoders: `"transformer"` (cross-attention over the grid) or `"attention"`
  (GRU/LSTM with Bahdanau or Luong attention, started from the mean feature).

`hidden_dim` is the memory width and the decoder's (an RNN decoder's `units`
and `embedding_dim` unless given).
"""

from kseq.data.pipeline.image_decoding import DEFAULT_MAX_PIXELS
from kseq.models.captioner.captioner import Captioner
from kseq.models.captioner.captioner_preprocessor import CaptionerPreprocessor
from kseq.models.encoders.image_encoder_architectures import image_size_pair
from kseq.models.part_catalog import decoder_entry, encoder_entry, encoder_names, split_options

ENCODERS = encoder_names("image")
DECODERS = ("transformer", "attention")
# Where the captioner's defaults differ from the catalog's (a fixed feed-forward width).
DEFAULTS = {"intermediate_dim": 512}


def build_captioner(target_tokenizer, encoder="small_cnn", decoder="transformer", image_size=64,
                    max_target_length=24, max_pixels=DEFAULT_MAX_PIXELS, dtype=None,
                    name="captioner", **options):
    """A `Captioner` from flat options (see the module docstring).

    Args:
        target_tokenizer: the caption tokenizer.
        encoder, decoder: catalog names (see the module docstring).
        image_size: `64` or `[H, W]`, the encoder's and the preprocessor's.
        max_target_length: the longest caption in tokens (with `<s>`/`</s>`).
        max_pixels: larger images are refused before decoding.
        **options: the parts' options (`hidden_dim`, `dropout`, `filters`,
            `trainable_backbone`, `backbone_weights`, `augmentation`,
            `num_layers`, `num_heads`, `cell`, `attention`, ...); one that no
            part takes raises `TypeError`.

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["a red circle"])
    >>> model = kseq.models.build_captioner(tok, decoder="attention", image_size=16,
    ...                                     hidden_dim=8, filters=(8,))
    >>> type(model.decoder).__name__, model.encoder.positions
    ('RnnDecoder', 64)
    """
    parts = encoder_entry(encoder, ENCODERS), decoder_entry(decoder, DECODERS)
    size = image_size_pair(image_size)
    encoder_options, decoder_options = split_options(
        options, parts, fixed=[{"image_size": size}, {"max_length": max_target_length}],
        defaults=DEFAULTS)
    image_encoder = parts[0].build(None, dtype=dtype, **encoder_options)
    text_decoder = parts[1].build(target_tokenizer.vocabulary_size, dtype=dtype,
                                  **decoder_options)
    preprocessor = CaptionerPreprocessor(target_tokenizer, size, max_target_length, max_pixels)
    return Captioner(image_encoder, text_decoder, preprocessor, dtype=dtype, name=name)
