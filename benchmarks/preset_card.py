"""Model-card figures of a translation preset, and the shipped weights file it chooses.

    # a trained run folder -> figures, the float16 weights file, the catalog entry, the card
    .venv/bin/python benchmarks/preset_card.py --preset libreoffice_en_fr_transformer \\
        --model runs/libreoffice_en_fr_transformer --write-weights \\
        --command "kseq train libreoffice_en_fr_transformer --output runs/... --minutes 115"
    # the shipped weights -> figures and the card (the weights file is not rewritten)
    .venv/bin/python benchmarks/preset_card.py --preset numbers_fr_transformer

Measures, on the recipe's **full** test split, sacrebleu BLEU / chrF (with their
signatures) and exact match for greedy search and beam 4 (GNMT length penalty,
α 0.6); the same for greedy on a fixed 200-pair slice (the first 200 test pairs),
which is committed as `kseq/presets/slices/<preset>.test200.tsv` so the tests
(and `make demo`) re-score it without fetching data; greedy decoding speed; the
parameter count and file size. With `--write-weights` the model is written in
float16 (`kseq.preset_files.write_preset_weights`) and re-scored after reloading:
if that costs more than 0.1 BLEU on the full test split it is written in float32.
Writes `benchmarks/results/card_<preset>.json`, the catalog entry (in the
recipe JSON: file, size, SHA-256, dtype, the slice figure) and `zoo/<preset>/CARD.md`.
"""

import argparse
import csv
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from kseq import preset_files, zoo  # noqa: E402
from kseq.data.libreoffice import NOTICE as LIBREOFFICE_NOTICE  # noqa: E402
from kseq.training import load_trained  # noqa: E402
from report import cpu_flags, emit  # noqa: E402 (benchmarks/, the script's folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLICE = 200


def scores(model, pairs, beam_size):
    started = time.perf_counter()
    result = model.evaluate_bleu(pairs, beam_size=beam_size, print_signature=False)
    seconds = time.perf_counter() - started
    keep = {k: result[k] for k in ("bleu", "chrf", "exact_match", "bleu_signature",
                                   "chrf_signature")}
    return {**keep, "sentences": len(pairs), "seconds": round(seconds, 1),
            "sentences_per_second": round(len(pairs) / seconds, 1),
            "examples": [[s, h, r] for (s, r), h in list(zip(pairs, result["hypotheses"]))[:5]]}


def write_slice(preset, pairs, builder):
    """The committed 200-pair slice (and, for LibreOffice text, its MPL-2.0 notice)."""
    path = os.path.join(ROOT, "kseq", "presets", "slices", f"{preset}.test200.tsv")
    with open(path, "w", encoding="utf-8", newline="") as handle:
        for source, target in pairs:
            handle.write(f"{source}\t{target}\n")
    if builder == "libreoffice":
        with open(os.path.join(os.path.dirname(path), f"{preset}.NOTICE.txt"), "w",
                  encoding="utf-8") as handle:
            handle.write(LIBREOFFICE_NOTICE + "\n")
    return os.path.relpath(path, os.path.join(ROOT, "kseq", "presets"))


def training_history(model_dir):
    path = os.path.join(model_dir or "", "history.csv")
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [{k: float(v) for k, v in row.items() if v} for row in csv.DictReader(handle)]


def record_in_catalog(preset, updates):
    path = os.path.join(ROOT, "kseq", "presets", f"{preset}.json")
    with open(path, encoding="utf-8") as handle:
        recipe = json.load(handle)
    recipe["weights"] = {**recipe["weights"], **updates}
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(recipe, indent=2, ensure_ascii=False) + "\n")
    return recipe["weights"]


def choose_weights(model, preset, full_greedy):
    """float16 unless it costs more than 0.1 BLEU on the full test split; returns the entry
    and the reloaded model's greedy figures."""
    entry = preset_files.write_preset_weights(model, preset, float16=True)
    reloaded = scores(preset_files.load_preset_model(preset), CHOICE["test"], 1)
    if full_greedy["bleu"] - reloaded["bleu"] > 0.1:
        entry = preset_files.write_preset_weights(model, preset, float16=False)
        reloaded = scores(preset_files.load_preset_model(preset), CHOICE["test"], 1)
    return entry, reloaded


CHOICE = {}


START, END = "<!-- card-figures:start -->", "<!-- card-figures:end -->"


def write_card(path, preset, recipe, result):
    """Replaces the measured block of `path` (between the markers), keeping the hand-written
    text around it; a new card gets a title and the block."""
    text = f"# {preset}\n\n{START}\n{END}\n"
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if START not in text:
            text = text.rstrip("\n") + f"\n\n{START}\n{END}\n"
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    block = f"{START}\n{card_text(preset, recipe, result)}\n{END}"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(head + block + tail)


def card_text(preset, recipe, result):
    greedy, beam, cut = (result["test_greedy"], result["test_beam4"], result["slice_greedy"])
    lines = ["## Measured (generated by `benchmarks/preset_card.py`)", "",
             f"* **Task**: {recipe['description']}",
             f"* **Data**: builder `{recipe['data']['builder']}` {json.dumps(recipe['data'])}; "
             f"splits {json.dumps(result['splits'])}. {result['licence']}",
             f"* **Model**: {json.dumps(recipe['model'])}; {result['parameters']:,} parameters; "
             f"weights file {result['weights']['bytes'] / 1e6:.1f} MB "
             f"({result['weights']['dtype']}).",
             f"* **Training**: `{result['command']}`"
             + (f" on {result['hardware']}; {result['optimizer_steps']:,} optimizer steps, {result['epochs']} epochs; "
                f"validation BLEU per epoch {result['val_bleu_per_epoch']}."
                if result["epochs"] else "."),
             f"* **Test, full split ({greedy['sentences']:,} pairs)**: greedy BLEU "
             f"{greedy['bleu']}, chrF {greedy['chrf']}, exact match {greedy['exact_match']}; "
             f"beam 4 (GNMT α 0.6) BLEU {beam['bleu']}, chrF {beam['chrf']}, exact match "
             f"{beam['exact_match']}.",
             f"* **Fixed 200-pair slice** (`kseq/presets/{result['slice_file']}`, checked by the "
             f"tests): greedy BLEU {cut['bleu']}, chrF {cut['chrf']}.",
             f"* **Signatures**: `{greedy['bleu_signature']}`, `{greedy['chrf_signature']}`.",
             f"* **Decoding speed** (measured on {result['hardware']}): greedy {greedy['sentences_per_second']}"
             f" sentences/s, beam 4 {beam['sentences_per_second']} sentences/s (batch 64).",
             f"* **Reproduce the figures**: `.venv/bin/python benchmarks/preset_card.py --preset "
             f"{preset}` (JSON: `benchmarks/results/card_{preset}.json`).",
             "* **Limitations**: " + result["limitations"], "", "## Samples (greedy, test split)",
             "", "| source | kseq | reference |", "|---|---|---|"]
    lines += [f"| {s} | {h} | {r} |".replace("\n", " ") for s, h, r in greedy["examples"]]
    lines += ["", "```python", "import kseq", f'model = kseq.zoo.translator("{preset}")  '
              "# weights checked against the catalog's SHA-256",
              f'model.translate([{json.dumps(greedy["examples"][0][0], ensure_ascii=False)}])',
              "```"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", required=True)
    parser.add_argument("--model", help="a run folder or .keras file; default: the shipped file")
    parser.add_argument("--write-weights", action="store_true")
    parser.add_argument("--command", default="(see the card)", help="how it was trained")
    parser.add_argument("--limitations", default="Trained on one domain; see the samples.")
    args = parser.parse_args()
    recipe = zoo.load_recipe(args.preset)
    splits = zoo.build_data(recipe)
    CHOICE["test"] = splits["test"]
    model = load_trained(args.model) if args.model else preset_files.load_preset_model(args.preset)
    result = {"preset": args.preset, "command": args.command, "limitations": args.limitations,
              "hardware": "2 CPU cores, flags " + " ".join(cpu_flags()),
              "splits": {k: len(v) for k, v in splits.items()},
              "parameters": model.count_params(),
              "optimizer_steps": int(model.optimizer.iterations.numpy())
              if getattr(model, "optimizer", None) is not None else None}
    history = training_history(args.model)
    result["epochs"] = len(history) or None
    result["val_bleu_per_epoch"] = [row.get("val_bleu") for row in history]
    result["licence"] = ("LibreOffice text: MPL-2.0 (notice in kseq/presets/slices/)."
                         if recipe["data"]["builder"] == "libreoffice" else
                         "Generated by num2words (LGPL-2.1 library; the data is generated here).")
    result["test_greedy"] = scores(model, splits["test"], 1)
    result["test_beam4"] = scores(model, splits["test"], 4)
    result["slice_file"] = write_slice(args.preset, splits["test"][:SLICE],
                                       recipe["data"]["builder"])
    result["slice_greedy"] = scores(model, splits["test"][:SLICE], 1)
    if args.write_weights:
        entry, result["test_greedy_after_reload"] = choose_weights(model, args.preset,
                                                                   result["test_greedy"])
    slice_figure = {"slice_200": {"file": result["slice_file"],
                                  "greedy_bleu": result["slice_greedy"]["bleu"],
                                  "greedy_chrf": result["slice_greedy"]["chrf"]}}
    result["weights"] = record_in_catalog(args.preset, slice_figure)
    result["cpu_flags"] = cpu_flags()
    emit(result, os.path.join(ROOT, "benchmarks", "results", f"card_{args.preset}.json"))
    os.makedirs(os.path.join(ROOT, "zoo", args.preset), exist_ok=True)
    write_card(os.path.join(ROOT, "zoo", args.preset, "CARD.md"), args.preset, recipe, result)


if __name__ == "__main__":
    main()
