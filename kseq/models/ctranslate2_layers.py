"""Keras layers of kseq's Transformer parts written into CTranslate2 specs.

Shared by the translator's (`kseq.models.translator.ctranslate2_export`) and the
language model's (`kseq.models.language_model.ctranslate2_export`) exports:
token and position tables, pre-LN norms, fused attention projections
(`[q|k|v]` or `q, [k|v]`), feed-forward layers and the one activation.

Example:
>>> import numpy as np, keras
>>> dense = keras.layers.Dense(3)
>>> dense.build((None, 2))
>>> class Linear:
...     weight = bias = None
>>> spec = Linear()
>>> set_linear(spec, dense)
>>> spec.weight.shape  # CTranslate2 stores [out, in]
(3, 2)
"""

import os

import numpy as np

from kseq.errors import KseqError
from kseq.export.staging import publish, staging_directory

QUANTIZATIONS = (None, "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
                 "float16", "bfloat16", "float32")
ACTIVATIONS = {"relu": "RELU", "gelu": "GELU"}


def array(variable):
    return np.asarray(variable.numpy(), dtype=np.float32)


def set_inputs(spec, part, embeddings_spec):
    """Token table, `√E` scaling, position table and (pre-LN) final norm of a part."""
    embeddings_spec.weight = array(part.token_embedding.embeddings)
    spec.scale_embeddings = bool(part.token_embedding.scale)
    positions = part.position_embedding
    if hasattr(positions, "embeddings"):  # learned
        table = array(positions.embeddings)
    else:  # sinusoidal: kseq's own table, [L, E]
        table = np.asarray(positions.table(part.hidden_dim), dtype=np.float32)
    spec.position_encodings.encodings = table
    if part.final_norm is not None:
        set_norm(spec.layer_norm, part.final_norm)


def set_norm(spec, norm):
    spec.gamma = array(norm.gamma)
    spec.beta = array(norm.beta)


def set_linear(spec, dense):
    spec.weight = array(dense.kernel).T.copy()  # Keras [in, out] -> CTranslate2 [out, in]
    if dense.bias is not None:
        spec.bias = array(dense.bias)


def set_fused(spec, denses):
    """One linear of several Dense layers stacked on the output axis (q|k|v or k|v)."""
    spec.weight = np.concatenate([array(d.kernel).T for d in denses], axis=0)
    if all(d.bias is not None for d in denses):
        spec.bias = np.concatenate([array(d.bias) for d in denses], axis=0)


def set_attention(spec, attention, norm, fused):
    """Self-attention (`fused=3`: [q|k|v], out) or cross-attention (`fused=2`: q, [k|v], out)."""
    if fused == 3:
        set_fused(spec.linear[0], [attention.query_dense, attention.key_dense,
                                attention.value_dense])
    else:
        set_linear(spec.linear[0], attention.query_dense)
        set_fused(spec.linear[1], [attention.key_dense, attention.value_dense])
    set_linear(spec.linear[-1], attention.output_dense)
    set_norm(spec.layer_norm, norm)


def set_feed_forward(spec, block):
    set_norm(spec.layer_norm, block.feed_forward_norm)
    set_linear(spec.linear_0, block.feed_forward.inner)
    set_linear(spec.linear_1, block.feed_forward.outer)


def feed_forward_activation(specs, blocks):
    names = {str(block.activation) for block in blocks}
    if len(names) != 1 or next(iter(names)) not in ACTIVATIONS:
        raise KseqError(f"CTranslate2 export needs one feed-forward activation, one of "
                        f"{sorted(ACTIVATIONS)}. Received: {sorted(names)}")
    return getattr(specs.Activation, ACTIVATIONS[names.pop()])


def save_spec(spec, model, directory, quantization, overwrite, write_config):
    """Validates and quantizes a filled CTranslate2 `spec`, then writes it with
    `write_config(folder)` into a staging folder published whole as `directory`."""
    try:
        spec.validate()
    except ValueError as error:  # a kseq layout this exporter does not know
        raise KseqError(f"The CTranslate2 spec is incomplete ({' '.join(str(error).split())})."
                        f" Received: {type(model).__name__}") from None
    spec.optimize(quantization=quantization)
    with staging_directory(os.path.dirname(directory)) as staging:
        folder = os.path.join(staging, "model")
        os.mkdir(folder)
        spec.save(folder)
        write_config(folder)
        publish(folder, directory, replace=overwrite)
    return directory
