"""How monotone a model's attention is on `numbers` en->fr: a number, not only a picture.

    python benchmarks/experiments/alignment_numbers.py --model numbers_fr_transformer --plot runs/align.png

For each test sentence the greedy decode's step attention (`state["attention"]`)
is read, and the share of its mass within ±1 source position of the diagonal
`s = t·(S-1)/(T-1)` is computed (`experiment_helpers.monotone_alignment_mass`).
English and French number words run in the same order, so a model that attends
where it translates puts most of its mass there. Prints JSON (mean, quartiles)
and writes one heatmap for a look by eye.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

Transformer numbers model attention (`benchmarks/experiments/alignment_numbers.py`): mean
attention mass within ±1 source position of the diagonal 0.649 over 98 test sentences
(quartiles 0.55 / 0.65 / 0.73)
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import argparse
import sys
import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import numpy as np

from kseq import zoo
from experiment_helpers import monotone_alignment_mass
from kseq.models.translator.attention_plot import attention_matrix, plot_attention
from kseq.training import load_trained


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a folder with model.keras, or the file")
    parser.add_argument("--recipe", default="numbers_fr_transformer",
                        help="the preset whose data builder gives the test split")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--plot", help="write the heatmap of one test sentence here")
    parser.add_argument("--json", help="where to write the result")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    model = load_trained(args.model)
    test = zoo.build_data(zoo.load_recipe(args.recipe))["test"][: args.sentences]
    masses = []
    for source, _ in test:
        _, _, weights = attention_matrix(model, source)
        if weights.shape[0] > 1 and weights.shape[1] > 1:  # one-word cases are trivially diagonal
            masses.append(monotone_alignment_mass(weights))
    result = {
        "model": args.model, "model_class": type(model).__name__,
        "sentences": len(masses), "window": "±1 source position",
        "mean_mass": round(float(np.mean(masses)), 4),
        "quartiles": [round(float(q), 4) for q in np.percentile(masses, [25, 50, 75])],
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.plot:
        example = max(test, key=lambda pair: len(pair[0].split()))[0]
        weights = plot_attention(model, example, args.plot)
        result["plot"] = {"path": args.plot, "source": example,
                          "mass": round(monotone_alignment_mass(weights), 4)}
    harness.write("alignment_numbers", result, path=args.json or "-")
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
