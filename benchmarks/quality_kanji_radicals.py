"""Quality run behind the README's image-classification figure: kanji radicals.

Trains the `kanji_radical_classifier` preset with `kseq.training.train` for at
most `--minutes`, then scores accuracy and macro-F1 on the builder's test split
next to two baselines in the same run: the majority class, and a 1-nearest-
neighbour copy of the training label by cosine similarity of raw pixels.

    .venv/bin/python benchmarks/quality_kanji_radicals.py --minutes 10

The data (KANJIDIC, CC BY-SA 3.0; IPA Gothic, IPA Font License) is fetched
from Debian by the builder; nothing of it is committed.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

**Measured** (`benchmarks/quality_kanji_radicals.py --minutes 10`, JSON in
`benchmarks/results/quality_kanji_radicals.json`, 2 CPU cores shared with a background
training): `kanji_radical_classifier` (SmallCnn [32, 64, 128] at 48 px + attention pooling,
350k parameters, 1,381 steps in the 10-minute cap) reaches **accuracy 0.833** (macro-F1
0.421: rare radicals have one or two test glyphs) on the 634 test kanji, against 0.057 for
the majority class (木) and 0.449 for copying the label of the nearest training glyph by
pixel cosine, in the same run.
"""

import collections
import io
import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import keras  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from kseq import zoo  # noqa: E402
from kseq.metrics.classification_scores import classification_scores  # noqa: E402
from kseq.training import train  # noqa: E402

PRESET = "kanji_radical_classifier"


def pixels(pairs):
    rows = [np.asarray(Image.open(io.BytesIO(png)).convert("L"), "float32").ravel()
            for png, _ in pairs]
    rows = 255.0 - np.stack(rows)  # ink, not paper
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-6)


def nearest_neighbour(train, test):
    similarity = pixels(test) @ pixels(train).T  # cosine
    return [train[i][1] for i in similarity.argmax(axis=1)]


def scores(truth, predicted, names):
    result = classification_scores([names.index(t) for t in truth],
                                   [names.index(p) for p in predicted], names)
    return {"accuracy": round(result["accuracy"], 4), "macro_f1": round(result["macro_f1"], 4)}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--output", default="runs/quality_kanji_radicals")
    parser.add_argument("--result", default="benchmarks/results/quality_kanji_radicals.json")
    args = harness.parse(parser, argv)
    keras.utils.set_random_seed(0)
    started = time.perf_counter()
    model, splits, _ = train(PRESET, args.output, minutes=args.minutes, verbose=2)
    seconds = time.perf_counter() - started
    names, test = model.label_names, splits["test"]
    truth = [label for _, label in test]
    majority = collections.Counter(label for _, label in splits["train"]).most_common(1)[0][0]
    predicted = [label for label, _ in model.predict_labels([image for image, _ in test])]
    result = {"preset": PRESET, "recipe": zoo.load_recipe(PRESET), "minutes_cap": args.minutes,
              "wall_seconds": round(seconds, 1), "parameters": model.count_params(),
              "optimizer_steps": int(model.optimizer.iterations.numpy()),
              "images": {name: len(pairs) for name, pairs in splits.items()},
              "classes": len(names),
              "majority_class": {"label": majority, **scores(truth, [majority] * len(test), names)},
              "nearest_neighbour_pixels": scores(truth, nearest_neighbour(splits["train"], test),
                                                 names),
              "kseq": scores(truth, predicted, names)}
    harness.write("quality_kanji_radicals", result, args, path=args.result,
                  printed={k: v for k, v in result.items() if k not in ("recipe", "cpu_flags")})


if __name__ == "__main__":
    main()
