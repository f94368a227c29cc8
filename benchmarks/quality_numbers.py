"""Quality run behind the README figure: numbers en->fr, Transformer, time-capped training.

Trains the `numbers_fr_transformer` preset with `kseq.training.train` for at most
`--minutes` of training, then measures exact match, BLEU and chrF on the
1,000-item test split (numbers never seen in training), greedy and beam 4.
Writes `benchmarks/results/quality_numbers.json` and prints it.

    .venv/bin/python benchmarks/quality_numbers.py --minutes 12
"""

import argparse
import json
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from kseq import zoo  # noqa: E402
from kseq.training import train  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="numbers_fr_transformer")
    parser.add_argument("--minutes", type=float, default=12)
    parser.add_argument("--output", default="runs/quality_numbers")
    parser.add_argument("--result", default="benchmarks/results/quality_numbers.json")
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    started = time.perf_counter()
    model, splits, bleu_history = train(args.preset, args.output, minutes=args.minutes,
                                        verbose=2)
    train_seconds = time.perf_counter() - started
    result = {
        "preset": args.preset,
        "recipe": zoo.load_recipe(args.preset),
        "minutes_cap": args.minutes,
        "wall_seconds_including_setup_and_epoch_bleu": round(train_seconds, 1),
        "parameters": model.count_params(),
        "train_pairs": len(splits["train"]),
        "test_pairs": len(splits["test"]),
        "optimizer_steps": int(model.optimizer.iterations.numpy()),
        "validation_history": bleu_history,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    for name, beam in (("greedy", 1), ("beam4", 4)):
        t0 = time.perf_counter()
        scores = model.evaluate_bleu(splits["test"], beam_size=beam, print_signature=False)
        result[name] = {
            "exact_match": round(scores["exact_match"], 4),
            "bleu": scores["bleu"],
            "chrf": scores["chrf"],
            "decode_seconds": round(time.perf_counter() - t0, 1),
        }
        result["bleu_signature"] = scores["bleu_signature"]
    os.makedirs(os.path.dirname(args.result), exist_ok=True)
    with open(args.result, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
    print(json.dumps({k: v for k, v in result.items() if k != "recipe"}, indent=2))


if __name__ == "__main__":
    main()
