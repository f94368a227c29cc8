"""Quality run behind the README figure: numbers en->fr, Transformer, time-capped training.

Trains the `numbers_fr_transformer` preset with `kseq.training.train` for at most
`--minutes` of training, then measures exact match, BLEU and chrF on the
1,000-item test split (numbers never seen in training), greedy and beam 4.
Writes `benchmarks/results/quality_numbers.json` and prints it.

    .venv/bin/python benchmarks/quality_numbers.py --minutes 12
"""

import os
import platform
import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import keras  # noqa: E402

from kseq import zoo  # noqa: E402
from kseq.training import train  # noqa: E402


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--preset", default="numbers_fr_transformer")
    parser.add_argument("--minutes", type=float, default=12)
    parser.add_argument("--output", default="runs/quality_numbers")
    parser.add_argument("--result", default="benchmarks/results/quality_numbers.json")
    args = harness.parse(parser, argv)
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
    harness.write("quality_numbers", result, args, path=args.result,
                  printed={k: v for k, v in result.items() if k != "recipe"})


if __name__ == "__main__":
    main()
