"""Decoding speed of two kseq trees on the same weights: the shipped `numbers_fr_transformer`.

    .venv/bin/python benchmarks/bench_decode_same_weights.py --other /path/to/older/checkout

The shipped model loads unchanged in kseq 0.1 and in today's parts, so this
times the search engines alone: same weights, same inputs, same outputs
(checked). Each side runs in its own child process (its tree first on
`PYTHONPATH`), the two alternated `--rounds` times; per side, the median over
rounds of sentences per second for greedy and beam-4 search (GNMT 0.6) on 512
test numbers in batches of 64, as `tf.function`s, traced before the clock
starts. Prints JSON: each side's figures and `ratios_this_over_other`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(ROOT, "kseq", "presets", "numbers_fr_transformer.keras")


def measure(batches):
    """Runs in the child: sentences per second and the outputs, for greedy and beam 4."""
    import keras
    import numpy as np

    import kseq
    from kseq.data import numbers_dataset

    model = keras.saving.load_model(MODEL)
    sources = [s for s, _ in numbers_dataset("fr", train_size=0, valid_size=0,
                                             test_size=64 * batches, seed=9)["test"]]
    ids = [model.source_ids_for(sources[i: i + 64]) for i in range(0, len(sources), 64)]
    result = {"kseq": os.path.dirname(os.path.dirname(kseq.__file__))}
    for name, beam in (("greedy", 1), ("beam4", 4)):
        search = model.compiled_search(model.search_settings(beam_size=beam))
        for batch in ids:  # trace every width before the clock starts
            search(batch)
        started = time.perf_counter()
        outputs = [search(batch)[0].numpy() for batch in ids]
        seconds = time.perf_counter() - started
        result[name] = {"sentences_per_second": round(len(sources) / seconds, 1),
                        "checksum": int(sum(int(np.sum(o)) for o in outputs))}
    return result


def run_side(tree, batches):
    env = {**os.environ, "PYTHONPATH": tree}
    done = subprocess.run([sys.executable, __file__, "--child", "--batches", str(batches)],
                          env=env, capture_output=True, text=True, check=True, cwd=tree)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--other", default=ROOT,
                        help="the other kseq checkout (e.g. a git worktree; default: this one)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = harness.parse(parser, argv, keras=False)  # the children load Keras
    if args.child:
        print(json.dumps(measure(args.batches)))
        return None
    if args.smoke:
        args.rounds, args.batches = 1, 1
    runs = harness.alternated({"other": lambda: run_side(args.other, args.batches),
                               "this": lambda: run_side(ROOT, args.batches)},
                              args.rounds)["rounds"]
    median = {side: {name: statistics.median(r[name]["sentences_per_second"] for r in rows)
                     for name in ("greedy", "beam4")} for side, rows in runs.items()}
    same = all(a[n]["checksum"] == b[n]["checksum"] for a, b in zip(runs["this"], runs["other"])
               for n in ("greedy", "beam4"))
    result = {"model": "numbers_fr_transformer (shipped)", "rounds": args.rounds,
              "sentences": 64 * args.batches, "runs": runs, "median_sentences_per_second": median,
              "same_outputs": same,
              "ratios_this_over_other": {n: round(median["this"][n] / median["other"][n], 3)
                                         for n in ("greedy", "beam4")}}
    harness.write("bench_decode_same_weights", result, args)
    return result


if __name__ == "__main__":
    main()
