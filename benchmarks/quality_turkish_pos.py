"""Quality run behind the README's tagging figure: Turkish POS, against the most-frequent tag.

Trains the `turkish_pos_tagger` preset with `kseq.training.train` for at most
`--minutes`, then scores token accuracy on the treebank's test split (its
README's split) overall, on words seen in training and on unseen words, next
to the most-frequent-tag baseline (`experiment_helpers.most_frequent_tag_baseline`,
unseen words: the most frequent tag) in the same run.

    .venv/bin/python benchmarks/quality_turkish_pos.py --minutes 12

Measured (the method notes docs/results.md held; its table keeps the headline figures):

**Measured** (`benchmarks/quality_turkish_pos.py --minutes 12`, JSON in
`benchmarks/results/quality_turkish_pos.json`, 2 CPU cores, AVX-512): the
`turkish_pos_tagger` preset (character BiGRU 2 × 128, 462k parameters) trained by `kseq
train` in 4.5 minutes (12 epochs), on the treebank's 485 test sentences (8,025 words, 21.5%
unseen in training), against the most-frequent-tag baseline in the same run:

| | token accuracy | seen words | unseen words |
|---|---|---|---|
| most frequent tag (unseen: NOUN) | 0.894 | 0.931 | 0.756 |
| kseq `turkish_pos_tagger` | **0.939** | 0.946 | **0.914** |

Per-tag F1 is in the JSON (ONOM and AFFIX, 0.0: a handful of test words each).
"""

import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import keras  # noqa: E402

from kseq import zoo  # noqa: E402
from experiment_helpers import most_frequent_tag_baseline  # noqa: E402 (benchmarks/)
from kseq.training import train  # noqa: E402


def seen_unseen_accuracy(model, splits):
    seen = {w for words, _ in splits["train"] for w in words}
    tagged = model.tag([words for words, _ in splits["test"]])
    counts = {"seen": [0, 0], "unseen": [0, 0]}
    for (words, gold), (_, found) in zip(splits["test"], tagged):
        for word, truth, guess in zip(words, gold, found + [None] * (len(gold) - len(found))):
            bucket = counts["seen" if word in seen else "unseen"]
            bucket[0] += truth == guess
            bucket[1] += 1
    total = [sum(c[i] for c in counts.values()) for i in (0, 1)]
    return {"accuracy": round(total[0] / total[1], 4),
            "seen_accuracy": round(counts["seen"][0] / counts["seen"][1], 4),
            "unseen_accuracy": round(counts["unseen"][0] / counts["unseen"][1], 4),
            "tokens": total[1], "unseen_tokens": counts["unseen"][1]}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--minutes", type=float, default=12)
    parser.add_argument("--output", default="runs/quality_turkish_pos")
    parser.add_argument("--result", default="benchmarks/results/quality_turkish_pos.json")
    args = harness.parse(parser, argv)
    keras.utils.set_random_seed(0)
    started = time.perf_counter()
    model, splits, _ = train("turkish_pos_tagger", args.output, minutes=args.minutes, verbose=2)
    seconds = time.perf_counter() - started
    baseline = most_frequent_tag_baseline(splits)
    result = {"preset": "turkish_pos_tagger", "recipe": zoo.load_recipe("turkish_pos_tagger"),
              "minutes_cap": args.minutes, "wall_seconds": round(seconds, 1),
              "parameters": model.count_params(),
              "optimizer_steps": int(model.optimizer.iterations.numpy()),
              "sentences": {name: len(pairs) for name, pairs in splits.items()},
              "kseq": seen_unseen_accuracy(model, splits),
              "most_frequent_tag": baseline,
              "per_tag_f1": {k: v["f1"] for k, v in
                             model.evaluate_tags(splits["test"])["per_class"].items()},
              "cpu_flags": harness.cpu_flags()}
    harness.write("quality_turkish_pos", result, args, path=args.result,
                  printed={k: v for k, v in result.items() if k != "recipe"})


if __name__ == "__main__":
    main()
