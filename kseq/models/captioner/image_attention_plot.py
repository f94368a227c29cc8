"""Where a captioner looks: each caption word's attention over the image, as a PNG grid."""

import numpy as np
import tensorflow as tf

from kseq.text.tokenizer import END_ID, START_ID


def image_attention(model, image, max_length=None):
    """Greedy-captions one image and collects `state["attention"]` at every step.

    Returns `(pixels [H, W, 3] uint8, words, weights [T, h, w])`; the words
    include `</s>` when the model emits it. For a Transformer decoder the
    weights are the last cross-attention's heads, averaged.
    """
    encoded = model.check_generate_inputs([image])
    inputs = model.preprocessor.inference_inputs(tf.constant(encoded, tf.string))
    memory = model.encode(inputs["images"])
    state = model.initial_state(memory)
    token, rows, words = START_ID, [], []
    for t in range(max_length or model.max_target_length):
        logits, state = model.step(tf.constant([token], tf.int32), state, memory, t)
        token = int(tf.argmax(logits[0]))
        rows.append(state["attention"].numpy()[0])
        words.append(model.target_tokenizer.vocabulary[token])
        if token == END_ID:
            break
    grid = model.encoder.grid
    return inputs["images"].numpy()[0], words, np.array(rows).reshape(-1, *grid)


def plot_image_attention(model, image, path, columns=4):
    """Writes one panel per caption word (the image, its attention overlaid); returns
    `(words, weights [T, h, w])`."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("plot_attention needs matplotlib: pip install 'kseq[plot]'") from error
    pixels, words, weights = image_attention(model, image)
    rows = (len(words) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(2.2 * columns, 2.4 * rows), squeeze=False)
    height, width = pixels.shape[:2]
    for index, axis in enumerate(axes.flat):
        axis.axis("off")
        if index >= len(words):
            continue
        axis.imshow(pixels)
        # Each grid cell covers its block of pixels (nearest-neighbour upsampling).
        axis.imshow(weights[index], cmap="magma", alpha=0.55, extent=(0, width, height, 0),
                    interpolation="nearest")
        axis.set_title(words[index], fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return words, weights
