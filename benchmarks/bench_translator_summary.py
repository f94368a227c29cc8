"""Median of each kseq / peer ratio over several `bench_translator.py` runs, as markdown.

    python benchmarks/bench_translator_summary.py benchmarks/results/bench_translator_run*.json

Prints one row per ratio (and per efficiency figure): each run's value, then the
median. Single runs on a shared 2-core machine vary by 10-30%, so the README
and the issue notes quote medians of three runs.
"""

import statistics
import sys

import harness  # benchmarks/harness.py


def figures(result):
    """The numbers worth a median: every ratio, efficiency, the cache check, output lengths."""
    out = dict(result["ratios_kseq_over_peer"])
    extra = result.get("extra_kseq_natural_xla_over_peer_natural")
    if extra is not None:
        out["extra: kseq natural with XLA / peer natural"] = extra
    for key, value in result["efficiency"].items():
        if key.endswith("fraction_of_matmul"):
            out[f"efficiency {key}"] = value
    out["matmul GFLOP/s (the limit)"] = result["efficiency"]["matmul_gflops"]
    out["step time t=35 / t=5"] = result["kseq"]["decoding"]["step_time_t35_over_t5"]
    # Neither side may win by being broken: the loss both reached on the same batches.
    for side in ("kseq", "peer"):
        out[f"loss after same-padding training, {side}"] = (
            result[side]["train_same_padding"]["last_loss"])
    # Natural-end rows compare search engines only when both models end alike.
    for side in ("kseq", "peer"):
        length = result[side]["decoding"]["greedy_natural"].get("mean_output_length")
        if length is not None:
            out[f"greedy natural: mean output length, {side}"] = length
    return out


def table(results):
    per_run = [figures(result) for result in results]
    header = "| figure | " + " | ".join(f"run {i + 1}" for i in range(len(results)))
    lines = [header + " | median |", "|---" * (len(results) + 2) + "|"]
    for key in per_run[0]:
        values = [run.get(key) for run in per_run]
        present = [v for v in values if v is not None]
        median = round(statistics.median(present), 3) if present else None
        cells = " | ".join("–" if v is None else f"{v:g}" for v in values)
        lines.append(f"| {key} | {cells} | {median:g} |" if median is not None
                     else f"| {key} | {cells} | – |")
    return "\n".join(lines)


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("paths", nargs="*", metavar="RUN.json", help="bench_translator.py results")
    args = harness.parse(parser, argv, keras=False)
    paths = args.paths or (["bench_translator_run1"] if args.smoke else [])
    if not paths:
        parser.error("give one or more bench_translator.py results. Received: none")
    markdown = table([harness.read(path) for path in paths])
    print(markdown)  # a markdown table for the README, not a result: nothing is written
    return markdown


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
