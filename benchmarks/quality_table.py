"""The LibreOffice en->fr quality table (markdown) from `results/quality_libreoffice_*.json`.

    python benchmarks/quality_table.py            # prints the table docs/results.md shows
    python benchmarks/quality_table.py --docs     # and rewrites it in docs/results.md
"""

import os
import sys

import harness  # benchmarks/harness.py

ROOT, RESULTS = harness.ROOT, harness.RESULTS
START, END = "<!-- libreoffice-table:start -->", "<!-- libreoffice-table:end -->"
ARCHS = ("transformer", "attention", "rnn", "conv")


def row(arch, run, label):
    greedy, beam = run["test_greedy"], run["test_beam4"]
    return (f"| {label} | {greedy['bleu']:.1f} / {greedy['chrf']:.1f} | "
            f"{beam['bleu']:.1f} / {beam['chrf']:.1f} |")


def rows(arch, result):
    """The 20-minute snapshot (when taken) and the final model of one result."""
    training = result["training"]
    runs = [(result["snapshot"], f"{arch} (20 min)")] if "snapshot" in result else []
    runs.append((result["final"], f"{arch} ({result['budget_minutes']:g} min)"))
    return [row(arch, run, label).replace(
        f"| {label} |",
        f"| {label} | {result['parameters'] / 1e6:.2f}M | {training['tokens_per_second']:,} |", 1)
        for run, label in runs]


def write_docs(table):
    path = os.path.join(ROOT, "docs", "results.md")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"{head}{START}\n{table}\n{END}{tail}")


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--docs", action="store_true", help="rewrite the table in docs/results.md")
    args = harness.parse(parser, argv, keras=False)
    lines = ["| architecture (budget) | params | tokens/s | test BLEU / chrF greedy | "
             "beam 4 |", "|---|---|---|---|---|"]
    for arch in ARCHS:
        path = os.path.join(RESULTS, f"quality_libreoffice_{arch}.json")
        if not os.path.isfile(path):
            lines.append(f"| {arch} | (not run) | | | |")
            continue
        result = harness.read(path)
        # A continued run keeps the shorter run it started from under "previous".
        for part in ([result["previous"]] if "previous" in result else []) + [result]:
            lines += rows(arch, part)
    table = "\n".join(lines)
    print(table)  # a markdown table, not a result: nothing is written but --docs
    if args.docs and not args.smoke:
        write_docs(table)
    return table


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
