"""Chooses search settings on the validation split, then scores greedy and beam 4 on test.

    python benchmarks/experiments/search_settings_libreoffice.py --model runs/lo_attention/model.keras \
        --json benchmarks/experiments/results/search_settings_libreoffice_attention_20min.json

`quality_libreoffice.py` scores every model with one fixed setting (GNMT length
penalty 0.6, no n-gram blocking). Under-trained RNN and conv models repeat
themselves, and beam search finds those loops more readily than greedy search,
so the fixed setting can make beam 4 look worse than greedy. Here each search
gets its own best setting, picked by BLEU on the first `--valid` validation
pairs (never on test): greedy over no-repeat n-gram sizes, beam 4 over GNMT
alpha and n-gram sizes. Then both are scored once on the test split. Prints JSON.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import argparse
import sys
import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import keras

from kseq.data.datasets.libreoffice import libreoffice_dataset

GREEDY_GRID = [{"no_repeat_ngram_size": n} for n in (0, 3)]
BEAM_GRID = [{"length_penalty": "gnmt", "alpha": alpha, "no_repeat_ngram_size": n}
             for alpha in (0.6, 1.0, 1.5) for n in (0, 3)]


def bleu_of(model, pairs, beam_size, setting):
    started = time.perf_counter()
    result = model.evaluate_bleu(pairs, beam_size=beam_size, print_signature=False, **setting)
    return {"setting": setting, "bleu": result["bleu"], "chrf": result["chrf"],
            "bleu_signature": result["bleu_signature"],
            "chrf_signature": result["chrf_signature"],
            "seconds": round(time.perf_counter() - started, 1)}


def choose_and_test(model, valid, test, beam_size, grid):
    tried = [bleu_of(model, valid, beam_size, setting) for setting in grid]
    best = max(tried, key=lambda row: (row["bleu"], row["chrf"]))  # first wins ties
    return {"valid": tried, "chosen": best["setting"],
            "test": bleu_of(model, test, beam_size, best["setting"])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a trained `.keras` translator")
    parser.add_argument("--valid", type=int, default=300, help="validation pairs for choosing")
    parser.add_argument("--limit", type=int, help="test pairs to score (smoke runs)")
    parser.add_argument("--json", help="where to write the result")
    args = parser.parse_args(argv)
    model = keras.saving.load_model(args.model)
    splits = libreoffice_dataset("fr")
    valid, test = splits["valid"][: args.valid], splits["test"][: args.limit]
    result = {"model": args.model, "valid_pairs": len(valid), "test_pairs": len(test),
              "greedy": choose_and_test(model, valid, test, 1, GREEDY_GRID),
              "beam4": choose_and_test(model, valid, test, 4, BEAM_GRID)}
    result["beam4_minus_greedy_test_bleu"] = round(
        result["beam4"]["test"]["bleu"] - result["greedy"]["test"]["bleu"], 2)
    harness.write("search_settings_libreoffice", result, path=args.json or "-")
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
