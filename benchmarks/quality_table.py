"""The LibreOffice en->fr quality table (markdown) from `results/quality_libreoffice_*.json`.

    python benchmarks/quality_table.py            # prints the table the README shows
    python benchmarks/quality_table.py --readme   # and rewrites it in README.md
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
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


def write_readme(table):
    path = os.path.join(ROOT, "README.md")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"{head}{START}\n{table}\n{END}{tail}")


def main():
    lines = ["| architecture (budget) | params | tokens/s | test BLEU / chrF greedy | "
             "beam 4 |", "|---|---|---|---|---|"]
    for arch in ARCHS:
        path = os.path.join(RESULTS, f"quality_libreoffice_{arch}.json")
        if not os.path.isfile(path):
            lines.append(f"| {arch} | (not run) | | | |")
            continue
        with open(path, encoding="utf-8") as handle:
            result = json.load(handle)
        # A continued run keeps the shorter run it started from under "previous".
        for part in ([result["previous"]] if "previous" in result else []) + [result]:
            lines += rows(arch, part)
    table = "\n".join(lines)
    print(table)
    if "--readme" in sys.argv[1:]:
        write_readme(table)


if __name__ == "__main__":
    main()
