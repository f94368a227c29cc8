"""Source-target alignment from a model's step attention, as numbers and as a PNG."""

import numpy as np
import tensorflow as tf

from kseq.text.tokenizer import END_ID, START_ID
from kseq.text.word_tokenizer import JOINER


def attention_matrix(model, text, max_length=None):
    """Greedy-decodes `text` and collects `state["attention"]` at every step.

    Returns `(source_pieces, target_pieces, weights [T, S])`; the target
    includes `</s>` when the model emits it. For the Transformer the weights are
    the heads of the last cross-attention, averaged.
    """
    ids = model.preprocessor.inference_inputs(tf.constant([text]))["source_ids"]
    source_length = int(tf.reduce_sum(tf.cast(ids[0] > 0, tf.int32)))
    pieces = model.source_tokenizer.split(model.source_tokenizer.normalize(tf.constant([text])))
    source = [p.decode("utf-8") for p in pieces.to_list()[0]][:source_length]
    memory = model.encode(ids)
    state = model.initial_state(memory)
    token, rows, target = START_ID, [], []
    for t in range(max_length or model.max_target_length):
        logits, state = model.step(tf.constant([token], tf.int32), state, memory, t)
        token = int(tf.argmax(logits[0]))
        rows.append(state["attention"].numpy()[0, :source_length])
        target.append(model.target_tokenizer.vocabulary[token])
        if token == END_ID:
            break
    return source, target, np.array(rows)


def plot_attention(model, text, path):
    """Writes a heatmap PNG of the alignment of `text` and its translation; returns the matrix."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("plot_attention needs matplotlib: pip install 'kseq[plot]'") from error
    source, target, weights = attention_matrix(model, text)
    # The joiner mark has no glyph in matplotlib's default font: show a middle dot.
    source, target = ([piece.replace(JOINER, "·") for piece in side] for side in (source, target))
    figure, axes = plt.subplots(figsize=(1 + 0.45 * len(source), 1 + 0.4 * len(target)))
    axes.imshow(weights, cmap="viridis", aspect="auto", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(source)), source, rotation=60, ha="right")
    axes.set_yticks(range(len(target)), target)
    axes.set_xlabel("source")
    axes.set_ylabel("output")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return weights
