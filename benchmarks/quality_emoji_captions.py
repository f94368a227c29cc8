"""Quality bar of emoji captions (issue 18): baselines and kseq captioners, one run, one split.

Rows, all scored on the same test split of `emoji_captions("en")` (split by the
emoji's code-point sequence) and on its two parts, `test_seen_base` (a skin
tone or gender variant of an emoji whose base is in training) and
`test_unseen_base`:

- `most_frequent`: one training caption for every image. Every English name
  is unique in training, so "most frequent" ties across all of them; the tie
  is broken by the caption whose words are most common in training (the
  highest mean training count of its whitespace tokens), a "typical" name;
- `nearest_neighbour`: the caption of the training image whose frozen
  EfficientNet-Lite0 ImageNet features (global average of the grid, images
  decoded by the captioners' own image function) have the highest cosine with
  the test image's;
- `kseq_<model>_greedy` and `kseq_<model>_beam4` for two captioners trained by
  `kseq.training.train` for the same `--minutes` each: `lite0`, the
  `emoji_en_captioner` preset (frozen Lite0 grid, trained on cached features,
  + a Transformer decoder), and `small_cnn`, the same recipe with a SmallCnn
  trained from scratch at 64 px. Both train until the clock stops them
  (`--epochs` caps that), so they compare at equal training time.

Each row has BLEU and chrF (sacrebleu, default settings; the signatures are
in the result), CIDEr-D (`kseq.metrics.cider`), exact match and the training
minutes. Writes `benchmarks/results/quality_emoji_captions.json` and prints it.
Run folders go to `--output/<model>`, emptied first (a fresh run each time).

    .venv/bin/python benchmarks/quality_emoji_captions.py --minutes 10
    .venv/bin/python benchmarks/quality_emoji_captions.py --quick   # a smoke run, ~2 minutes
"""

import argparse
import collections
import os
import platform
import shutil
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from kseq import zoo  # noqa: E402
from kseq.metrics.cider import cider  # noqa: E402
from kseq.metrics.text_scores import corpus_scores  # noqa: E402
from kseq.training import train  # noqa: E402
from report import cpu_flags, emit  # noqa: E402 (benchmarks/, the script's folder)

PRESET = "emoji_en_captioner"
SUBSETS = ("test", "test_seen_base", "test_unseen_base")
# The from-scratch peer: the preset's recipe with the backbone swapped.
SMALL_CNN = {"encoder": "small_cnn", "image_size": 64, "filters": [32, 64, 96],
             "trainable_backbone": True}
QUICK = {"train": 300, "valid": 20, "test": 40}  # --quick: images per split, one epoch


def most_frequent_caption(captions):
    """The most frequent caption; ties broken by the highest mean training count of its words."""
    caption_counts = collections.Counter(captions)
    word_counts = collections.Counter(word for caption in captions for word in caption.split())

    def typicality(caption):
        words = caption.split()
        return sum(word_counts[w] for w in words) / max(1, len(words))

    best = max(sorted(caption_counts), key=lambda c: (caption_counts[c], typicality(c)))
    ties = sum(1 for count in caption_counts.values() if count == caption_counts[best])
    return best, ties


def pooled_lite0_features(images, image_size, batch_size=64):
    """`[N, 1280]` unit-length global averages of the frozen ImageNet Lite0 grid."""
    import tensorflow as tf

    from kseq.data.image_decoding import decode_rows
    from kseq.layers import EfficientNetLite0

    backbone = EfficientNetLite0(weights="imagenet")
    features = tf.function(lambda pixels: keras.ops.mean(backbone(pixels, training=False),
                                                         axis=(1, 2)), autograph=False)
    rows = []
    for begin in range(0, len(images), batch_size):
        pixels, _ = decode_rows(tf.constant(images[begin:begin + batch_size]), image_size)
        rows.append(features(pixels).numpy())  # [b, 1280]
    pooled = np.concatenate(rows).astype(np.float64)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def nearest_neighbour_captions(train, test, image_size):
    """Each test image gets the caption of its most similar training image (cosine)."""
    train_features = pooled_lite0_features([image for image, _ in train], image_size)
    test_features = pooled_lite0_features([image for image, _ in test], image_size)
    nearest = np.argmax(test_features @ train_features.T, axis=1)  # [N_test]
    return [train[index][1] for index in nearest]


def samples(test, hypotheses, count=12):
    """`[reference, hypothesis]` of `count` items spread through the test split."""
    step = max(1, len(test) // count)
    return [[test[i][1], hypotheses[i]] for i in range(0, len(test), step)][:count]


def scores_of(hypotheses, test, subsets):
    """BLEU, chrF, CIDEr-D and exact match on the test split and each subset."""
    position = {id(pair): index for index, pair in enumerate(test)}
    result = {}
    for name, pairs in subsets.items():
        chosen = [position[id(pair)] for pair in pairs]
        hyps, refs = [hypotheses[i] for i in chosen], [test[i][1] for i in chosen]
        if not hyps:
            result[name] = {"items": 0}
            continue
        scores = corpus_scores(hyps, refs)
        result[name] = {"items": len(hyps), "bleu": scores["bleu"], "chrf": scores["chrf"],
                        "cider_d": round(cider(hyps, refs).score, 4),
                        "exact_match": round(scores["exact_match"], 4)}
    return result


class FitClock(keras.callbacks.Callback):
    """Seconds spent inside `fit` (training steps and the per-epoch validation BLEU)."""

    def __init__(self):
        super().__init__()
        self.seconds, self.started, self.epochs = 0.0, None, 0

    def on_train_begin(self, logs=None):
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.epochs += 1

    def on_train_end(self, logs=None):
        self.seconds += time.perf_counter() - self.started


def train_captioner(name, model_overrides, args):
    """Trains one captioner into `--output/name`; returns `(model, splits, facts)`."""
    folder = os.path.join(args.output, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)  # a benchmark measures a fresh run
    overrides = {"model": model_overrides, "training": {"epochs": args.epochs}}
    if args.quick:
        overrides["data"] = {"limit": {"train": QUICK["train"], "valid": QUICK["valid"]}}
        overrides["training"].update(epochs=1, bleu_subset=10)
    keras.utils.set_random_seed(0)
    clock = FitClock()
    started = time.perf_counter()
    # Checkpoints hold the frozen backbone too: rare ones keep the clock on training.
    model, splits, history = train(PRESET, folder, minutes=args.minutes, overrides=overrides,
                                   save_every_steps=1000, verbose=2, extra_callbacks=[clock])
    facts = {"recipe": zoo.merge(zoo.load_recipe(PRESET), overrides),
             "parameters": model.count_params(),
             "trainable_parameters": int(sum(np.prod(v.shape) for v in model.trainable_weights)),
             "training_minutes": round(clock.seconds / 60, 2),
             "setup_and_training_seconds": round(time.perf_counter() - started, 1),
             "epochs_done": clock.epochs,  # the last one may be cut by the clock
             "optimizer_steps": int(model.optimizer.iterations.numpy()),
             "validation_history": history}
    return model, splits, facts


def captioner_rows(name, model, facts, test, subsets):
    rows = []
    for search, beam in (("greedy", 1), ("beam4", 4)):
        started = time.perf_counter()
        hypotheses = model.caption([image for image, _ in test], beam_size=beam)
        rows.append({"row": f"kseq_{name}_{search}", "training_minutes": facts["training_minutes"],
                     "decode_seconds": round(time.perf_counter() - started, 1),
                     "scores": scores_of(hypotheses, test, subsets),
                     "samples": samples(test, hypotheses)})
    return rows


def quality_bar(rows):
    """The issue's bar: each captioner row above both baselines on chrF, on both subsets."""
    by_name = {row["row"]: row["scores"] for row in rows}
    bar = {}
    for row in rows:
        if not row["row"].startswith("kseq_"):
            continue
        bar[row["row"]] = all(
            row["scores"][subset].get("chrf", 0) > by_name[baseline][subset].get("chrf", 0)
            for subset in ("test_seen_base", "test_unseen_base")
            for baseline in ("most_frequent", "nearest_neighbour"))
    return bar


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10, help="training minutes per model")
    parser.add_argument("--epochs", type=int, default=10_000,
                        help="epoch cap (default: so many that --minutes stops training)")
    parser.add_argument("--models", nargs="+", default=["lite0", "small_cnn"],
                        choices=["lite0", "small_cnn"])
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: {QUICK} images, one epoch")
    parser.add_argument("--output", default="runs/quality_emoji_captions")
    parser.add_argument("--result", default=None,
                        help="default benchmarks/results/quality_emoji_captions.json, "
                             "or --output/quick.json with --quick")
    args = parser.parse_args()
    if args.result is None:
        args.result = os.path.join(args.output, "quick.json") if args.quick else \
            "benchmarks/results/quality_emoji_captions.json"
    started = time.perf_counter()
    recipe = zoo.load_recipe(PRESET)
    image_size = (recipe["model"]["image_size"],) * 2

    models, trained = {}, {}
    for name in args.models:
        model, splits, facts = train_captioner(name, {} if name == "lite0" else SMALL_CNN, args)
        models[name], trained[name] = facts, model
    test = splits["test"][:QUICK["test"]] if args.quick else splits["test"]
    kept = {id(pair) for pair in test}
    subsets = {name: [pair for pair in splits[name] if id(pair) in kept] for name in SUBSETS}

    caption, ties = most_frequent_caption([c for _, c in splits["train"]])
    t0 = time.perf_counter()
    neighbours = nearest_neighbour_captions(splits["train"], test, image_size)
    rows = [
        {"row": "most_frequent", "caption": caption, "tied_captions": ties,
         "training_minutes": 0.0, "scores": scores_of([caption] * len(test), test, subsets)},
        {"row": "nearest_neighbour", "features": "EfficientNet-Lite0 ImageNet, global average "
         f"of the {image_size[0]} px grid, cosine", "training_minutes": 0.0,
         "feature_seconds": round(time.perf_counter() - t0, 1),
         "scores": scores_of(neighbours, test, subsets),
         "samples": samples(test, neighbours)},
    ]
    for name, model in trained.items():
        rows += captioner_rows(name, model, models[name], test, subsets)

    signatures = corpus_scores(["a"], ["a"])
    result = {
        "preset": PRESET, "quick": args.quick, "minutes_per_model": args.minutes,
        "data": {"builder": "emoji_captions", "lang": recipe["data"]["lang"],
                 "image_size": recipe["data"]["image_size"],
                 "sizes": {name: len(splits[name]) for name in ("train", "valid")}
                 | {name: len(pairs) for name, pairs in subsets.items()}},
        "bleu_signature": signatures["bleu_signature"],
        "chrf_signature": signatures["chrf_signature"],
        "cider": "CIDEr-D (sigma 6, clipped, x10), document frequencies from the scored "
                 "subset's references, kseq.metrics.cider tokens",
        "rows": rows,
        "bar_captioner_beats_both_baselines_on_chrf_on_both_subsets": quality_bar(rows),
        "models": models,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "cpu_flags": cpu_flags()},
    }
    os.makedirs(os.path.dirname(args.result) or ".", exist_ok=True)
    emit(result, args.result)
    return result


if __name__ == "__main__":
    main()
