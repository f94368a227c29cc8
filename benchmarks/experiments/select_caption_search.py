"""The caption search chosen on a validation split: beam 4 against MBR over a beam.

Scores a trained captioner (a run folder, `.keras` file or preset name) on the
**validation** split of its recipe's data (never a test split): beam 4 (the
default), and `caption(mbr=True)` over beams of 8 and 16, temperatures 0.5 to
4, with the GNMT length penalty and without. Prints chrF (sacrebleu) and the
decoding seconds of each setting and the best one; writes
`benchmarks/experiments/results/select_caption_search_<name>.json`. `caption_quality.py`'s
`mbr16` row uses the setting chosen here.

    .venv/bin/python benchmarks/experiments/select_caption_search.py --model runs/emoji_en_captioner

Measured (the method notes docs/results.md held; its table keeps the headline figures):

On the emoji validation split (`benchmarks/experiments/select_caption_search.py`, 17 settings) MBR
(`caption(beam_size=…, mbr=True)`, see the search, docs/architecture.md#search-kseqdecoding) lifts
the shipped `emoji_en_captioner`'s chrF from 78.5 (beam 4) to 81.2 (beam 8, GNMT penalty,
temperature 1) and 81.5 (beam 16, no penalty, temperature 2, the best); on the shipped
`libreoffice_en_fr_transformer`'s validation split (896 paragraphs, `kseq evaluate
libreoffice_en_fr_transformer --data valid --beam 8 --mbr`) BLEU 63.0 → 63.5 and chrF
77.5 → 78.5 against beam 4.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import argparse
import os
import time

import sacrebleu  # noqa: E402

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
from kseq import zoo  # noqa: E402
from kseq.training import load_trained  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = [{"beam_size": 4}] + [
    {"beam_size": beam, "mbr": True, "mbr_temperature": temperature, "length_penalty": penalty}
    for penalty in ("gnmt", None) for beam in (8, 16) for temperature in (0.5, 1.0, 2.0, 4.0)]


def recipe_of(source, model):
    """The recipe a model was trained from: a preset's, or the run folder's `recipe.json`."""
    if getattr(model, "recipe", None):
        return model.recipe
    return zoo.load_recipe(os.path.join(source, "recipe.json"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="run folder, .keras file or preset")
    parser.add_argument("--name", help="result name (default: the model folder's name)")
    args = parser.parse_args()
    model = load_trained(args.model)
    valid = zoo.build_data(recipe_of(args.model, model))["valid"]
    images, references = [item[0] for item in valid], [item[1] for item in valid]
    rows = []
    for setting in SETTINGS:
        started = time.perf_counter()
        captions = model.caption(images, **setting)
        rows.append({**setting, "valid_chrf": round(
            sacrebleu.corpus_chrf(captions, [references]).score, 2),
                     "seconds": round(time.perf_counter() - started, 1)})
        print(rows[-1], flush=True)
    name = args.name or os.path.basename(os.path.normpath(args.model)).removesuffix(".keras")
    harness.write(f"select_caption_search_{name}",
                  {"model": args.model, "split": "valid", "items": len(valid), "rows": rows,
                   "best": max(rows, key=lambda row: row["valid_chrf"])},
                  path=os.path.join(harness.FOLDER, "experiments", "results",
                                    f"select_caption_search_{name}.json"))


if __name__ == "__main__":
    main()
