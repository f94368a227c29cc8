"""Reading translators saved by kseq 0.1, before the parts existed.

Those files hold a `kseq>Translator`, `kseq>RnnTranslator` or
`kseq>ConvTranslator` whose config is a recipe's flat hyper-parameters (no
`"encoder"` key). This module, imported last by `kseq.models.translator` and
by nothing else, registers the two old class names (both load as a
`Translator`) and sets `Translator.legacy_reader` to
`translator_from_legacy_config`, which builds the same parts from those
options; the weights load unchanged because the composed graph has the same
sublayers in the same order (`legacy_layout=True`, see
`Decoder.reuse_encoder_layers`).

Example:
>>> import kseq
>>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
>>> config = {"arch": "attention", "source_tokenizer": tok.get_config(),
...           "target_tokenizer": tok.get_config(), "units": 8, "embedding_dim": 8}
>>> model = kseq.models.Translator.from_config(config)
>>> type(model.decoder).__name__, model.legacy_layout
('RnnDecoder', True)
"""

import keras

from kseq.models.translator.architectures import build_translator
from kseq.models.translator.translator import Translator
from kseq.text import tokenizer_from_config


def legacy_arch(config):
    """The architecture of a kseq 0.1 config: its `"arch"`, else conv or Transformer
    (the two classes that had no `arch` option)."""
    if "arch" in config:
        return config["arch"]
    return "conv" if "kernel_size" in config else "transformer"


def translator_from_legacy_config(config):
    """A `Translator` from the config of a model saved before the parts existed."""
    config = dict(config)
    arch = legacy_arch(config)
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


Translator.legacy_reader = staticmethod(translator_from_legacy_config)
# kseq 0.1 files name these classes; they load as a Translator (through the reader above).
keras.saving.get_custom_objects().update(
    {"kseq>RnnTranslator": Translator, "kseq>ConvTranslator": Translator})
