"""`export_ctranslate2`: a kseq Transformer translator as a CTranslate2 model folder.

The CTranslate2 `TransformerSpec` is built from the Keras weights one variable
at a time (no CTranslate2 converter reads Keras files). What maps, and how:

- pre-LN blocks with final norms (`norm_first=True`) or post-LN blocks
  (`pre_norm=False`, no final norm); kseq's ReLU or GELU feed-forward; every
  layer norm's epsilon (kseq: 1e-5) in the model's `config.json`
  (`layer_norm_epsilon`, which CTranslate2 reads for Transformer models);
- token embeddings (one table, or one per side), scaled by `√E` when the
  model scales them; the decoder's output projection is the embedding table
  (tied) or the Dense layer's transposed kernel and bias (untied);
- positions: the sinusoidal table kseq computes (`[sin | cos]`, its own
  frequencies) or the learned table, set explicitly as the spec's position
  encodings, so CTranslate2's own sinusoids are never used;
- Keras `Dense` kernels `[in, out]` become CTranslate2 weights `[out, in]`;
  self-attention's query, key and value are fused into one `[3E, E]` matrix,
  cross-attention's key and value into one `[2E, E]`;
- no `<s>`/`</s>` around the source, decoding starts from `<s>`, and the
  vocabularies are the tokenizers' token lists (`<pad>` stays at id 0: CTranslate2
  never reads it).

Beside CTranslate2's files, `kseq_ctranslate2.json` keeps the tokenizer
settings (the vocabularies are CTranslate2's vocabulary files), the length
limits and the search defaults; `kseq.zoo.translator(folder)` and
`kseq translate folder` read it (`CTranslate2Translator`). RNN, attention and
convolutional translators, captioners and classifiers are refused: CTranslate2
runs none of them.
"""

import json
import os

import numpy as np

from kseq.errors import KseqError
from kseq.models.ctranslate2_layers import QUANTIZATIONS  # noqa: F401 (the CLI's choices)
from kseq.models.ctranslate2_layers import (array, feed_forward_activation, save_spec,
                                            set_attention, set_feed_forward, set_inputs,
                                            set_linear)
from kseq.version import __version__



def export_ctranslate2(model, directory, *, quantization=None, beam_size=4, n_best=1,
                       length_penalty="fairseq", alpha=0.6, max_length=None, patience=2.0,
                       overwrite=False):
    """Writes `model` (a Transformer `Translator`) as a CTranslate2 model folder `directory`.

    Args:
        model: a `kseq.models.Translator` with a Transformer encoder and decoder.
        directory: the folder to write (written whole, then renamed into place).
        quantization: CTranslate2 weight type to store (`"int8"`, `"float16"`, ...);
            None keeps float32. A float32 export can still run as int8
            (`compute_type="int8"` when loading).
        beam_size, n_best, length_penalty, alpha, max_length: the search
            defaults `kseq_ctranslate2.json` records; `length_penalty` is
            `"fairseq"` (`L^α`) or None (CTranslate2 has no GNMT penalty).
        patience: CTranslate2's beam patience (a search runs until `beam_size ·
            patience` hypotheses have finished; with 1 it often stops before
            kseq's provable stop and misses kseq's best hypothesis).
        overwrite: replace `directory` when it is an earlier CTranslate2 export.

    Returns:
        `directory`.

    Example:
    >>> import kseq, tempfile, os
    >>> folder = os.path.join(tempfile.mkdtemp(), "ct2")
    >>> model = kseq.zoo.translator("numbers_fr_transformer")
    >>> from kseq.models.translator.ctranslate2_export import export_ctranslate2
    >>> sorted(os.listdir(export_ctranslate2(model, folder)))  # doctest: +NORMALIZE_WHITESPACE
    ['config.json', 'kseq_ctranslate2.json', 'model.bin', 'source_vocabulary.json',
     'target_vocabulary.json']
    """
    from kseq.ctranslate2.translator import import_ctranslate2, is_ctranslate2_export

    encoder, decoder = check_convertible(model)
    search = _search_defaults(model, beam_size, n_best, length_penalty, alpha, max_length,
                              patience)
    if quantization not in QUANTIZATIONS:
        raise KseqError(f"`quantization` must be one of {list(QUANTIZATIONS)}. "
                        f"Received: quantization={quantization!r}")
    directory = os.path.abspath(os.fspath(directory))
    if os.path.lexists(directory) and not (overwrite and is_ctranslate2_export(directory)):
        what = "an earlier CTranslate2 export" if is_ctranslate2_export(directory) else \
            "not a CTranslate2 export"
        raise KseqError(f"The output folder exists ({what}); remove it or choose another"
                        f"{' (or pass overwrite=True)' if what.startswith('an') else ''}. "
                        f"Received: {directory}")
    ctranslate2 = import_ctranslate2()
    spec = transformer_spec(ctranslate2, model, encoder, decoder)
    return save_spec(spec, model, directory, quantization, overwrite,
                     lambda folder: _write_config(folder, model, search, quantization, ctranslate2.__version__))


def check_convertible(model):
    """`(encoder, decoder)` of a Transformer translator; one-line `KseqError` for any other
    model (CTranslate2 runs Transformer encoder-decoders only)."""
    from kseq.models import Translator
    from kseq.models.decoders.transformer_decoder import TransformerDecoder
    from kseq.models.encoders.transformer_encoder import TransformerEncoder

    encoder, decoder = getattr(model, "encoder", None), getattr(model, "decoder", None)
    if not isinstance(model, Translator) or not isinstance(encoder, TransformerEncoder) or \
            not isinstance(decoder, TransformerDecoder) or not decoder.cross_attention:
        parts = f" (encoder {type(encoder).__name__}, decoder {type(decoder).__name__})" \
            if isinstance(model, Translator) else ""
        raise KseqError("CTranslate2 runs Transformer translators only; it does not run RNN, "
                        "attention or convolutional translators, captioners, classifiers or "
                        f"taggers. Received: a {type(model).__name__}{parts}")
    return encoder, decoder


def transformer_spec(ctranslate2, model, encoder, decoder):
    """The `ctranslate2.specs.TransformerSpec` of `model`, every variable set, vocabularies
    registered (not yet validated)."""
    specs = ctranslate2.specs
    activation = feed_forward_activation(specs, encoder.blocks + decoder.blocks)
    encoder_spec = specs.TransformerEncoderSpec(encoder.num_layers, encoder.num_heads,
                                                pre_norm=encoder.norm_first,
                                                activation=activation)
    decoder_spec = specs.TransformerDecoderSpec(decoder.num_layers, decoder.num_heads,
                                                pre_norm=decoder.norm_first,
                                                activation=activation)
    set_inputs(encoder_spec, encoder, encoder_spec.embeddings[0])
    set_inputs(decoder_spec, decoder, decoder_spec.embeddings)
    for block_spec, block in zip(encoder_spec.layer, encoder.blocks):
        set_attention(block_spec.self_attention, block.self_attention, block.attention_norm,
                       fused=3)
        set_feed_forward(block_spec.ffn, block)
    for block_spec, block in zip(decoder_spec.layer, decoder.blocks):
        set_attention(block_spec.self_attention, block.self_attention,
                       block.self_attention_norm, fused=3)
        set_attention(block_spec.attention, block.cross_attention, block.cross_attention_norm,
                       fused=2)
        set_feed_forward(block_spec.ffn, block)
    if decoder.output_projection is None:  # tied: logits = states · tableᵀ, no bias
        decoder_spec.projection.weight = array(decoder.token_embedding.embeddings)
    else:
        set_linear(decoder_spec.projection, decoder.output_projection)
    spec = specs.TransformerSpec(encoder_spec, decoder_spec)
    spec.config.layer_norm_epsilon = _epsilon(encoder, decoder)
    spec.config.add_source_bos = False
    spec.config.add_source_eos = False
    spec.config.decoder_start_token = "<s>"
    preprocessor = model.preprocessor
    spec.register_source_vocabulary(list(preprocessor.source_tokenizer.vocabulary))
    spec.register_target_vocabulary(list(preprocessor.target_tokenizer.vocabulary))
    return spec


def _epsilon(encoder, decoder):
    """The one layer-norm epsilon of every norm (CTranslate2 has one per model)."""
    values = {float(block.layer_norm_epsilon) for block in encoder.blocks + decoder.blocks}
    values |= {float(part.final_norm.epsilon) for part in (encoder, decoder)
               if part.final_norm is not None}
    if len(values) != 1:
        raise KseqError(f"CTranslate2 has one layer-norm epsilon per model. "
                        f"Received: epsilons {sorted(values)}")
    return values.pop()


def _search_defaults(model, beam_size, n_best, length_penalty, alpha, max_length, patience):
    from kseq.arguments import check_float, check_int

    if length_penalty == "gnmt":
        raise KseqError("CTranslate2 normalises scores by L^alpha only: use length_penalty="
                        "'fairseq' (or None); GNMT's ((5+L)/6)^alpha has no CTranslate2 "
                        "counterpart. Received: length_penalty='gnmt'")
    if length_penalty not in ("fairseq", None):
        raise KseqError(f"`length_penalty` must be 'fairseq' or None. "
                        f"Received: length_penalty={length_penalty!r}")
    beam_size, n_best = check_int("beam_size", beam_size), check_int("n_best", n_best)
    if n_best > beam_size:
        raise KseqError(f"`n_best` must be <= `beam_size`. Received: n_best={n_best}, "
                        f"beam_size={beam_size}")
    return {"beam_size": beam_size, "n_best": n_best, "length_penalty": length_penalty,
            "alpha": check_float("alpha", alpha),
            "max_length": check_int("max_length", max_length, maximum=model.max_target_length,
                                    allow_none=True),
            "patience": check_float("patience", patience, minimum=1.0)}


def _write_config(folder, model, search, quantization, ctranslate2_version):
    """`kseq_ctranslate2.json`: tokenizers (vocabularies: CTranslate2's files), limits, search."""
    from kseq.ctranslate2.translator import CONFIG_FILE, FORMAT_VERSION

    files = set(os.listdir(folder))
    shared = "shared_vocabulary.json" in files
    preprocessor = model.preprocessor
    tokenizers = {}
    for side in ("source", "target"):
        config = dict(getattr(preprocessor, f"{side}_tokenizer").get_config())
        config.pop("vocabulary")
        tokenizers[f"{side}_tokenizer"] = config
    config = {
        "format_version": FORMAT_VERSION,
        "task": "translator",
        "kseq_version": __version__,
        "ctranslate2_version": ctranslate2_version,
        "quantization": quantization,
        **tokenizers,
        "vocabularies": {side: "shared_vocabulary.json" if shared else f"{side}_vocabulary.json"
                         for side in ("source", "target")},
        "max_source_length": preprocessor.max_source_length,
        "max_target_length": preprocessor.max_target_length,
        "search": search,
    }
    with open(os.path.join(folder, CONFIG_FILE), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
