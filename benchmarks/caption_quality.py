"""Shared by the caption quality scripts (issue 18): baselines, trained captioners, scores.

Test items are the data builders' `(image, caption, ...)` tuples; a subset
(`{"test": test, "test_seen_base": [...]}`) lists items of the test split
itself (the same tuples), so one decode of the test split scores them all.

- `most_frequent_caption` and `nearest_neighbour_captions`: the two
  baselines (the caption of the training image whose frozen
  EfficientNet-Lite0 ImageNet features have the highest cosine); together
  they are `baseline_rows`;
- `train_captioner`: `kseq.training.train` into a fresh folder with a clock
  on `fit` (training steps and the per-epoch validation BLEU), its facts;
  `run_overrides` are the recipe overrides of a benchmark run;
- `captioner_rows`: greedy and beam 4 rows of a trained captioner;
- `scores_of`: BLEU and chrF (sacrebleu), CIDEr-D and exact match per subset;
- the `thinned` data builder (registered in `kseq.zoo.DATA_BUILDERS` on
  import): another builder's splits with some of them cut to evenly spaced
  items (learning curves, smoke runs over every language or category);
- `caption_arguments`, `metric_notes`, `machine`, `write_result`: the CLI
  flags and the parts of a result every script shares.

Rows are dicts: `row` (the name), facts, `scores` (`{subset: {...}}`) and
`samples` (`[reference, hypothesis]` pairs spread through the test split).
"""

import collections
import json
import os
import platform
import shutil
import time

import harness  # benchmarks/harness.py, before TensorFlow
import keras
import numpy as np

from kseq import zoo
from kseq.metrics.cider import cider
from kseq.metrics.text_scores import corpus_scores
from kseq.training import train

# The from-scratch peer of a frozen-Lite0 recipe: the same recipe with the backbone swapped.
SMALL_CNN = {"encoder": "small_cnn", "image_size": 64, "filters": [32, 64, 96],
             "trainable_backbone": True}
THINNED = "thinned"
# Row suffix -> caption() options. The MBR setting (a beam of 16, no length penalty,
# temperature 2) is the best of 17 on the emoji validation split, never a test split
# (`select_caption_search.py`, results/select_caption_search_emoji_en_captioner.json: chrF
# 81.5 against beam 4's 78.5).
SEARCHES = (("greedy", {"beam_size": 1}), ("beam4", {"beam_size": 4}),
            ("mbr16", {"beam_size": 16, "mbr": True, "mbr_temperature": 2.0,
                       "length_penalty": None}))


# === Data ===

def spread(items, count):
    """`count` items evenly spaced through `items` (all of them when there are fewer)."""
    if count >= len(items):
        return list(items)
    return [items[index * len(items) // count] for index in range(count)]


def thinned(inner, keep, **options):
    """The `inner` data builder's splits, each split named in `keep` cut to `keep[split]`
    evenly spaced items; `options` go to `inner`. Registered as the `thinned` builder:
    `{"builder": "thinned", "inner": "tuxpaint_captions", "keep": {"train": 160}, ...}`."""
    splits = zoo.DATA_BUILDERS[inner](**options)
    return {name: spread(items, keep[name]) if name in keep else items
            for name, items in splits.items()}


zoo.DATA_BUILDERS.setdefault(THINNED, thinned)  # the recipe names builders; this one is ours


def thinned_data(inner, keep):
    """A recipe data override: builder `inner` (the recipe's other data options kept) with
    `keep` = `{split: count}` evenly spaced items; None (no override) without `keep`."""
    return {"builder": THINNED, "inner": inner, "keep": keep} if keep else None


# === Baselines ===

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

    from kseq.data.pipeline.image_decoding import decode_rows
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


def nearest_indices(train_images, test_images, image_size):
    """`[N_test]`: the index of each test image's most similar training image (cosine)."""
    train_features = pooled_lite0_features(list(train_images), image_size)
    test_features = pooled_lite0_features(list(test_images), image_size)
    return np.argmax(test_features @ train_features.T, axis=1)  # [N_test]


def nearest_neighbour_captions(train, test, image_size):
    """Each test image gets the caption of its most similar training image (cosine)."""
    nearest = nearest_indices([item[0] for item in train], [item[0] for item in test],
                              image_size)
    return [train[index][1] for index in nearest]


def lite0_description(image_size):
    return f"EfficientNet-Lite0 ImageNet, global average of the {image_size[0]} px grid, cosine"


def baseline_rows(train, test, subsets, image_size):
    """The `most_frequent` and `nearest_neighbour` rows, and `{row: hypotheses}`.

    A training item repeated in `train` (`emoji_captions(balance_bases=...)` repeats
    the very same tuple, and `build_data` only slices lists, so identity finds the
    repeats) counts once: the baselines see each training image once."""
    train = list({id(item): item for item in train}.values())
    caption, ties = most_frequent_caption([item[1] for item in train])
    started = time.perf_counter()
    neighbours = nearest_neighbour_captions(train, test, image_size)
    hypotheses = {"most_frequent": [caption] * len(test), "nearest_neighbour": neighbours}
    rows = [
        {"row": "most_frequent", "caption": caption, "tied_captions": ties,
         "training_minutes": 0.0, "scores": scores_of(hypotheses["most_frequent"], test, subsets)},
        {"row": "nearest_neighbour", "features": lite0_description(image_size),
         "training_minutes": 0.0, "feature_seconds": round(time.perf_counter() - started, 1),
         "scores": scores_of(neighbours, test, subsets), "samples": samples(test, neighbours)},
    ]
    return rows, hypotheses


# === Scores ===

def samples(test, hypotheses, count=12):
    """`[reference, hypothesis]` of `count` items spread through the test split."""
    step = max(1, len(test) // count)
    return [[test[i][1], hypotheses[i]] for i in range(0, len(test), step)][:count]


def text_scores(hypotheses, references):
    """BLEU, chrF, CIDEr-D and exact match of one group of captions."""
    if not hypotheses:
        return {"items": 0}
    scores = corpus_scores(hypotheses, references)
    return {"items": len(hypotheses), "bleu": scores["bleu"], "chrf": scores["chrf"],
            "cider_d": round(cider(hypotheses, references).score, 4),
            "exact_match": round(scores["exact_match"], 4)}


def scores_of(hypotheses, test, subsets):
    """`text_scores` of each subset of the test split (`{name: items of test}`)."""
    position = {id(item): index for index, item in enumerate(test)}
    result = {}
    for name, items in subsets.items():
        chosen = [position[id(item)] for item in items]
        result[name] = text_scores([hypotheses[i] for i in chosen], [test[i][1] for i in chosen])
    return result


def metric_notes():
    """The metrics' settings, as every result records them."""
    signatures = corpus_scores(["a"], ["a"])
    return {"bleu_signature": signatures["bleu_signature"],
            "chrf_signature": signatures["chrf_signature"],
            "cider": "CIDEr-D (sigma 6, clipped, x10), document frequencies from the scored "
                     "subset's references, kseq.metrics.cider tokens"}


# === Trained captioners ===

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


def run_overrides(model=None, data=None, epochs=10_000, quick=False):
    """Recipe overrides of a benchmark run: `model` options, a `data` section merged over
    the recipe's, an epoch cap (default so many that the clock stops training) and, for a
    `quick` smoke run, one epoch with validation BLEU on 10 sentences."""
    overrides = {"model": model or {}, "training": {"epochs": epochs}}
    if data:
        overrides["data"] = data
    if quick:
        overrides["training"].update(epochs=1, bleu_subset=10)
    return overrides


def recipe_source(recipe, folder):
    """A preset name as it is; a recipe dict written beside `folder` (`train` reads files)."""
    if not isinstance(recipe, dict):
        return recipe
    path = folder.rstrip("/") + ".recipe.json"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(recipe, handle, indent=2, ensure_ascii=False)
    return path


def train_captioner(recipe, folder, minutes, overrides):
    """Trains `recipe` (a preset name or a recipe dict) into `folder`, emptied first, for
    `minutes` of `fit`; returns `(model, splits, facts)`."""
    if os.path.isdir(folder):
        shutil.rmtree(folder)  # a benchmark measures a fresh run
    source = recipe_source(recipe, folder)
    keras.utils.set_random_seed(0)
    clock = FitClock()
    started = time.perf_counter()
    # Checkpoints hold the frozen backbone too: rare ones keep the clock on training.
    model, splits, history = train(source, folder, minutes=minutes, overrides=overrides,
                                   save_every_steps=1000, verbose=2, extra_callbacks=[clock])
    facts = {"recipe": zoo.merge(zoo.load_recipe(source), overrides),
             "parameters": model.count_params(),
             "trainable_parameters": int(sum(np.prod(v.shape) for v in model.trainable_weights)),
             "training_minutes": round(clock.seconds / 60, 2),
             "setup_and_training_seconds": round(time.perf_counter() - started, 1),
             "epochs_done": clock.epochs,  # the last one may be cut by the clock
             "optimizer_steps": int(model.optimizer.iterations.numpy()),
             "validation_history": history}
    return model, splits, facts


def captioner_rows(name, model, facts, test, subsets, language=None):
    """Rows `kseq_<name>_greedy`, `_beam4` and `_mbr16` (`SEARCHES`), and `{row: hypotheses}`;
    `language` captions in that language (a multilingual captioner)."""
    rows, hypotheses = [], {}
    for search, options in SEARCHES:
        started = time.perf_counter()
        captions = model.caption([item[0] for item in test], language=language, **options)
        row = f"kseq_{name}_{search}"
        hypotheses[row] = captions
        rows.append({"row": row, "training_minutes": facts["training_minutes"],
                     "decode_seconds": round(time.perf_counter() - started, 1),
                     "scores": scores_of(captions, test, subsets),
                     "samples": samples(test, captions)})
    return rows, hypotheses


# === The script around ===

def caption_arguments(doc, name, minutes, quick):
    """The flags every caption quality script takes: `--minutes`, `--epochs`, `--quick`,
    `--output` (run folders, default `runs/<name>`) and `--result`."""
    parser = harness.arguments(doc)  # and the harness's --seed, --threads, --json, --smoke
    parser.add_argument("--minutes", type=float, default=minutes, help="training minutes per model")
    parser.add_argument("--epochs", type=int, default=10_000,
                        help="epoch cap (default: so many that --minutes stops training)")
    parser.add_argument("--quick", action="store_true", help=f"a short real run: {quick}")
    parser.add_argument("--output", default=f"runs/{name}")
    parser.add_argument("--result", default=None,
                        help=f"default benchmarks/results/{name}.json, "
                             "or --output/quick.json with --quick")
    return parser


def result_path(args, name):
    """`--json` / `--result`, else `--output/quick.json` for a quick run, else the results
    folder's (None with `--smoke`)."""
    if getattr(args, "json", None) or getattr(args, "result", None) is not None:
        return harness.result_path(name, args) if args.json else args.result
    if args.quick and not args.smoke:
        return os.path.join(args.output, "quick.json")
    return harness.result_path(name, args)


def machine():
    return {**harness.machine(), "python": platform.python_version()}


def write_result(result, path):
    """Prints the result as JSON and writes it to `path` (None: nowhere): `harness.write`."""
    harness.write("caption_quality", result, path=path or "-")
    return result
