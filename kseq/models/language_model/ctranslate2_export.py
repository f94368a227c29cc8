"""`export_ctranslate2`: a kseq Transformer language model as a CTranslate2 decoder-only model.

CTranslate2's `TransformerDecoderModelSpec` (its GPT-2 layout: `Generator`) maps the
`TransformerDecoder(cross_attention=False)` of a `LanguageModel` exactly, with the
translator export's pieces (`kseq.models.translator.ctranslate2_export`): pre-LN blocks
with a final norm (or post-LN without), ReLU/GELU feed-forward, one layer-norm epsilon,
kseq's position table set as the spec's position encodings, `√E` embedding scaling, fused
`[q|k|v]` self-attention, and the output projection tied to the token table. The
vocabulary is the tokenizer's tokens followed by one token per category
(`<category=NAME>`): a text starts from its category's token (or `<s>`), as in kseq.

One difference is handled at generation: kseq's logits cover the text tokens only (a
category is never predicted), while CTranslate2 scores every row of the table; the
category tokens are suppressed in every step (`suppress_sequences`), so greedy search
picks the same tokens (scores can differ in the probability the suppressed tokens held).

Beside CTranslate2's files, `kseq_ctranslate2.json` keeps the tokenizer settings, the
categories, `max_length` and `"task": "language_model"`; `kseq generate FOLDER` and
`kseq.ctranslate2.CTranslate2LanguageModel` read it.
"""

import json
import os

from kseq.errors import KseqError
from kseq.models.ctranslate2_layers import (QUANTIZATIONS, array, feed_forward_activation,
                                            save_spec, set_attention, set_feed_forward,
                                            set_inputs)
from kseq.version import __version__


def category_token(name, vocabulary):
    """The CTranslate2 token of category `name` (never one of the text tokens)."""
    token = f"<category={name}>"
    while token in vocabulary:
        token = f"<{token}>"
    return token


def export_ctranslate2(model, directory, *, quantization=None, overwrite=False):
    """Writes `model` (a Transformer `LanguageModel`) as a CTranslate2 model folder.

    Args:
        model: a `kseq.models.LanguageModel` whose decoder is a `TransformerDecoder`.
        directory: the folder to write (written whole, then renamed into place).
        quantization: CTranslate2 weight type to store (`"int8"`, ...); None keeps float32.
        overwrite: replace `directory` when it is an earlier CTranslate2 export.

    Returns:
        `directory`.
    """
    from kseq.ctranslate2.translator import import_ctranslate2, is_ctranslate2_export
    from kseq.models.decoders.transformer_decoder import TransformerDecoder

    decoder = getattr(model, "decoder", None)  # the task by its name: the task imports this
    if getattr(model, "preset_task", None) != "language_model" or \
            not isinstance(decoder, TransformerDecoder):
        raise KseqError("CTranslate2 runs Transformer language models only (a GRU or LSTM "
                        f"language model has no CTranslate2 layout). Received: a "
                        f"{type(model).__name__} with a {type(decoder).__name__}")
    if quantization not in QUANTIZATIONS:
        raise KseqError(f"`quantization` must be one of {list(QUANTIZATIONS)}. "
                        f"Received: quantization={quantization!r}")
    directory = os.path.abspath(os.fspath(directory))
    if os.path.lexists(directory) and not (overwrite and is_ctranslate2_export(directory)):
        raise KseqError(f"The output folder exists; remove it or choose another (or pass "
                        f"overwrite=True over an earlier export). Received: {directory}")
    ctranslate2 = import_ctranslate2()
    spec = decoder_model_spec(ctranslate2, model)
    return save_spec(spec, model, directory, quantization, overwrite,
                     lambda folder: _write_config(folder, model, quantization, ctranslate2.__version__))


def decoder_model_spec(ctranslate2, model):
    """The `TransformerDecoderModelSpec` of `model`, every variable set (not validated)."""
    specs, decoder = ctranslate2.specs, model.decoder
    decoder_spec = specs.TransformerDecoderSpec(
        decoder.num_layers, decoder.num_heads, pre_norm=decoder.norm_first,
        activation=feed_forward_activation(specs, decoder.blocks), with_encoder_attention=False)
    set_inputs(decoder_spec, decoder, decoder_spec.embeddings)
    for block_spec, block in zip(decoder_spec.layer, decoder.blocks):
        set_attention(block_spec.self_attention, block.self_attention,
                       block.self_attention_norm, fused=3)
        set_feed_forward(block_spec.ffn, block)
    # Tied: logits = states · tableᵀ, no bias.
    decoder_spec.projection.weight = array(decoder.token_embedding.embeddings)
    spec = specs.TransformerDecoderModelSpec(decoder_spec)
    epsilons = {float(block.layer_norm_epsilon) for block in decoder.blocks}
    epsilons |= {float(decoder.final_norm.epsilon)} if decoder.final_norm is not None else set()
    if len(epsilons) != 1:
        raise KseqError(f"CTranslate2 has one layer-norm epsilon per model. Received: "
                        f"epsilons {sorted(epsilons)}")
    spec.config.layer_norm_epsilon = epsilons.pop()
    vocabulary = list(model.tokenizer.vocabulary)
    spec.register_vocabulary(vocabulary + [category_token(name, vocabulary)
                                           for name in model.categories])
    return spec


def _write_config(folder, model, quantization, ctranslate2_version):
    """`kseq_ctranslate2.json`: the tokenizer (its vocabulary: CTranslate2's file), the
    categories and their tokens, `max_length`."""
    from kseq.ctranslate2.translator import CONFIG_FILE, FORMAT_VERSION

    tokenizer = dict(model.tokenizer.get_config())
    vocabulary = tokenizer.pop("vocabulary")
    config = {
        "format_version": FORMAT_VERSION,
        "task": "language_model",
        "kseq_version": __version__,
        "ctranslate2_version": ctranslate2_version,
        "quantization": quantization,
        "tokenizer": tokenizer,
        "vocabulary": "vocabulary.json",
        "categories": {name: category_token(name, vocabulary) for name in model.categories},
        "max_length": model.max_length,
    }
    with open(os.path.join(folder, CONFIG_FILE), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
