"""Is the unseen-base emoji gap real? Paired significance of captioner vs caption copy (issue 18).

Issue 18's emoji bar asks the captioner to beat the nearest-neighbour caption
copy on chrF on both test subsets. On `test_unseen_base` (314 emoji) the
shipped `emoji_en_captioner` trails the copy (by 1.5 chrF with MBR, more with
greedy and beam search), while a 6-minute retrain of its recipe led it on the
validation split's unseen bases (133 emoji, `select_emoji_captioner.py`).
This script asks whether such differences are more than the noise of a few
hundred names: sacrebleu's paired tests
(`sacrebleu.significance.PairedTest`, the same code as `sacrebleu
--paired-bs` / `--paired-ar`) of each search of the shipped preset
(`caption_quality.SEARCHES`) against the copy, on

- `test_unseen_base`, `test_seen_base` (the issue's subsets);
- `valid_unseen_base`, `valid_seen_base` (built like them,
  `select_emoji_captioner.base_subset_rows`).

Per subset and search: chrF of both systems, the paired bootstrap's mean and
95% interval half-width (1,000 resamples of the subset's emoji), and the
p-values of the paired bootstrap and of approximate randomisation (10,000
shuffles) for "the two systems have the same chrF". Writes
`benchmarks/experiments/results/emoji_gap_significance.json`.

    .venv/bin/python benchmarks/experiments/emoji_gap_significance.py
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import time

from sacrebleu.metrics import CHRF
from sacrebleu.significance import PairedTest

# benchmarks/, the script's folder
import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
from caption_quality import SEARCHES, machine, nearest_neighbour_captions, write_result
from kseq import zoo
from experiment_helpers import base_subset_rows

PRESET = "emoji_en_captioner"
COPY = "nearest_neighbour"
BOOTSTRAP_SAMPLES = 1000
RANDOMISATION_TRIALS = 10_000


def paired_test(systems, references, test_type, samples):
    """sacrebleu's paired test of every system against `systems[COPY]` (listed first)."""
    named = [(COPY, systems[COPY])] + [(n, s) for n, s in systems.items() if n != COPY]
    _, results = PairedTest(named, {"chrF": CHRF()}, [references], test_type=test_type,
                            n_samples=samples)()
    # results: {"System": [names], "chrF2": [Result per system, the baseline first]}
    metric = next(key for key in results if key != "System")
    return dict(zip(results["System"], results[metric]))


def subset_report(systems, references):
    bootstrap = paired_test(systems, references, "bs", BOOTSTRAP_SAMPLES)
    randomised = paired_test(systems, references, "ar", RANDOMISATION_TRIALS)
    copy_score = bootstrap[COPY].score
    report = {"items": len(references), COPY: {"chrf": round(copy_score, 2),
                                              "bootstrap_mean": round(float(bootstrap[COPY].mean), 2),
                                              "bootstrap_ci95": round(float(bootstrap[COPY].ci), 2)}}
    for name in systems:
        if name == COPY:
            continue
        result = bootstrap[name]
        report[name] = {"chrf": round(result.score, 2),
                        "minus_copy": round(result.score - copy_score, 2),
                        "bootstrap_mean": round(float(result.mean), 2),
                        "bootstrap_ci95": round(float(result.ci), 2),
                        "p_bootstrap": round(float(result.p_value), 4),
                        "p_randomisation": round(float(randomised[name].p_value), 4)}
    return report


def main():
    started = time.perf_counter()
    splits = zoo.build_data(zoo.load_recipe(PRESET))  # the recipe's 96 px renders
    model = zoo.captioner(PRESET)
    image_size = model.preprocessor.image_size
    result = {"preset": PRESET, "baseline": COPY, "metric": "chrF (sacrebleu corpus chrF2)",
              "tests": {"bootstrap": f"paired bootstrap, {BOOTSTRAP_SAMPLES} resamples, seed "
                                     "12345 (sacrebleu's)",
                        "randomisation": f"approximate randomisation, {RANDOMISATION_TRIALS} "
                                         "trials"},
              "subsets": {}}
    for split in ("test", "valid"):
        items = splits[split]
        references = [caption for _, caption in items]
        images = [image for image, _ in items]
        # The copy over the whole split, as the quality scripts compute it, then the rows.
        systems = {COPY: nearest_neighbour_captions(splits["train"], items, image_size)}
        for search, options in SEARCHES:
            systems[f"kseq_{search}"] = model.caption(images, **options)
        for name, rows in base_subset_rows(splits, split).items():
            if name == split:  # the whole split: the quality scripts report it
                continue
            print(f"{name}: {len(rows)} emoji", flush=True)
            result["subsets"][name] = subset_report(
                {system: [captions[i] for i in rows] for system, captions in systems.items()},
                [references[i] for i in rows])
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"] = machine()
    write_result(result, "benchmarks/experiments/results/emoji_gap_significance.json")


if __name__ == "__main__":
    main()
