"""The four translator architectures from flat hyper-parameters, and files saved before parts.

`build_translator(arch, source_tokenizer, target_tokenizer, **options)` maps a
recipe's `model` section onto an encoder, a decoder and a preprocessor.
Models saved before the tasks redesign stored exactly these options (classes
`Translator`, `RnnTranslator`, `ConvTranslator`); `Translator.from_config`
reads them through `translator_from_legacy_config`, and their weights load
unchanged because the composed graph has the same sublayers in the same order.
"""

import warnings

import keras

from kseq.models.decoders import ConvDecoder, RnnDecoder, TransformerDecoder
from kseq.models.encoders import ConvEncoder, RnnEncoder, TransformerEncoder
from kseq.models.translator.translator_preprocessor import TranslatorPreprocessor
from kseq.models.translator import Translator
from kseq.text import tokenizer_from_config

ARCHITECTURES = ("transformer", "attention", "rnn", "conv")
SHARE_EMBEDDINGS = ("decoder", "all", "none")


def check_shared_embeddings(share_embeddings, source_tokenizer, target_tokenizer, choices):
    """`ValueError` for a `share_embeddings` outside `choices`, or "all" over two
    vocabularies."""
    if share_embeddings not in choices:
        raise ValueError(f"`share_embeddings` must be one of {choices}. "
                         f"Received: share_embeddings={share_embeddings!r}")
    if share_embeddings == "all" and source_tokenizer.vocabulary != target_tokenizer.vocabulary:
        raise ValueError("share_embeddings='all' needs one vocabulary for both sides. "
                         "Received: two different vocabularies")


def _transformer(source_tokenizer, target_tokenizer, dtype, legacy_layout, num_layers=2,
                 num_heads=4, hidden_dim=128, intermediate_dim=512, dropout=0.1,
                 max_source_length=64, max_target_length=64, share_embeddings="decoder",
                 position="sinusoidal", norm_first=True, scale_embeddings=True,
                 embedding_dropout=None, activation_dropout=None):
    check_shared_embeddings(share_embeddings, source_tokenizer, target_tokenizer,
                            choices=SHARE_EMBEDDINGS)
    blocks = dict(num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
                  intermediate_dim=intermediate_dim, dropout=dropout, position=position,
                  norm_first=norm_first, scale_embeddings=scale_embeddings,
                  embedding_dropout=embedding_dropout, activation_dropout=activation_dropout,
                  dtype=dtype)
    # kseq 0.1 had one position table for both sides (see Decoder.reuse_encoder_layers).
    positions = max(max_source_length, max_target_length) if legacy_layout else max_source_length
    encoder = TransformerEncoder(source_tokenizer.vocabulary_size, max_length=positions,
                                 name="encoder", **blocks)
    decoder = TransformerDecoder(target_tokenizer.vocabulary_size, max_length=max_target_length,
                                 tie_embeddings=share_embeddings != "none", name="decoder",
                                 **blocks)
    return encoder, decoder, share_embeddings == "all"


def _recurrent(arch):
    def build(source_tokenizer, target_tokenizer, dtype, legacy_layout, cell="gru", units=128,
              embedding_dim=128, attention="bahdanau", dropout=0.1, max_source_length=64,
              max_target_length=64, num_layers=1, share_embeddings="none"):
        check_shared_embeddings(share_embeddings, source_tokenizer, target_tokenizer,
                                choices=("none", "all"))
        encoder = RnnEncoder(source_tokenizer.vocabulary_size, embedding_dim=embedding_dim,
                             units=units, cell=cell, num_layers=num_layers, dropout=dropout,
                             dtype=dtype, name="encoder")
        decoder = RnnDecoder(target_tokenizer.vocabulary_size, embedding_dim=embedding_dim,
                             units=units, cell=cell,
                             num_layers=1 if arch == "attention" else num_layers,
                             attention=attention if arch == "attention" else None,
                             dropout=dropout, dtype=dtype, name="decoder")
        return encoder, decoder, share_embeddings == "all"
    return build


def _conv(source_tokenizer, target_tokenizer, dtype, legacy_layout, num_encoder_layers=4,
          num_decoder_layers=3, embedding_dim=256, hidden_dim=256, kernel_size=3, dropout=0.1,
          max_source_length=64, max_target_length=64):
    parts = dict(embedding_dim=embedding_dim, hidden_dim=hidden_dim, kernel_size=kernel_size,
                 dropout=dropout, dtype=dtype)
    encoder = ConvEncoder(source_tokenizer.vocabulary_size, num_layers=num_encoder_layers,
                          max_length=max_source_length, name="encoder", **parts)
    decoder = ConvDecoder(target_tokenizer.vocabulary_size, num_layers=num_decoder_layers,
                          max_length=max_target_length, name="decoder", **parts)
    return encoder, decoder, False


BUILDERS = {"transformer": _transformer, "attention": _recurrent("attention"),
            "rnn": _recurrent("rnn"), "conv": _conv}


def build_translator(arch, source_tokenizer, target_tokenizer, dtype=None, name=None,
                     legacy_layout=False, **options):
    """A `Translator` of architecture `arch` from a recipe's flat hyper-parameters.

    Args:
        arch: `"transformer"`, `"attention"`, `"rnn"` or `"conv"`.
        source_tokenizer, target_tokenizer: `kseq.text` tokenizers.
        dtype: a dtype policy for every layer.
        name: the model's name.
        legacy_layout: as `Translator`'s (for models saved by kseq 0.1).
        **options: the architecture's hyper-parameters (see the README's
            architecture table); an unknown one raises `TypeError`.

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    >>> model = kseq.models.build_translator("attention", tok, tok, units=8, embedding_dim=8)
    >>> type(model.encoder).__name__, type(model.decoder).__name__
    ('RnnEncoder', 'RnnDecoder')
    """
    if arch not in ARCHITECTURES:
        raise ValueError(f"Unknown architecture; expected one of {ARCHITECTURES}. "
                         f"Received: arch={arch!r}")
    encoder, decoder, shared = BUILDERS[arch](source_tokenizer, target_tokenizer, dtype,
                                              legacy_layout, **options)
    preprocessor = TranslatorPreprocessor(
        source_tokenizer, target_tokenizer, options.get("max_source_length", 64),
        options.get("max_target_length", 64))
    return Translator(encoder, decoder, preprocessor, share_source_embedding=shared,
                      legacy_layout=legacy_layout, dtype=dtype, **({"name": name} if name else {}))


def _legacy_arch(config):
    if "arch" in config:
        return config["arch"]
    return "conv" if "kernel_size" in config else "transformer"


def translator_from_legacy_config(config):
    """A `Translator` from the config of a model saved before the parts existed."""
    config = dict(config)
    arch = _legacy_arch(config)
    config.pop("arch", None)
    tokenizers = [tokenizer_from_config(config.pop(side))
                  for side in ("source_tokenizer", "target_tokenizer")]
    dtype = config.pop("dtype", None)
    if isinstance(dtype, dict):
        dtype = keras.dtype_policies.deserialize(dtype)
    trainable = config.pop("trainable", True)
    model = build_translator(arch, *tokenizers, dtype=dtype, legacy_layout=True, **config)
    model.trainable = trainable
    return model


def RnnTranslator(source_tokenizer, target_tokenizer, arch="attention", **options):  # noqa: N802
    """Deprecated: `build_translator(arch, ...)` (`arch` "attention" or "rnn")."""
    warnings.warn("`RnnTranslator` is deprecated: use `build_translator`.", DeprecationWarning,
                  stacklevel=2)
    if arch not in ("attention", "rnn"):
        raise ValueError(f"`arch` must be one of ('rnn', 'attention'). Received: arch={arch!r}")
    return build_translator(arch, source_tokenizer, target_tokenizer, **options)


def ConvTranslator(source_tokenizer, target_tokenizer, **options):  # noqa: N802
    """Deprecated: `build_translator("conv", ...)`."""
    warnings.warn("`ConvTranslator` is deprecated: use `build_translator`.", DeprecationWarning,
                  stacklevel=2)
    return build_translator("conv", source_tokenizer, target_tokenizer, **options)


# Files saved before the parts existed name these classes; they load as a Translator.
keras.saving.get_custom_objects().update(
    {"kseq>RnnTranslator": Translator, "kseq>ConvTranslator": Translator})
