"""Model-card figures of a classifier or tagger preset, and the weights file it ships.

    # a run folder of `kseq train` -> figures, the weights file, the catalog entry, the card
    .venv/bin/python tools/classifier_card.py --preset sms_spam_classifier \\
        --model runs/sms_spam_classifier --write-weights \\
        --command "kseq train sms_spam_classifier --output runs/sms_spam_classifier" \\
        --compare runs/sms_spam_classifier_100k
    # the shipped weights -> figures and the card (the weights file is not rewritten)
    .venv/bin/python tools/classifier_card.py --preset sms_spam_classifier

Measures on the recipe's **full** test split (and its validation split) the
task's scores (`evaluate_pairs`: accuracy and macro-F1 for a classifier, MCC
and spam recall where there is a `spam` class; token accuracy, macro-F1 and
sentence accuracy for a tagger) next to a baseline computed on the same split
in the same run: binarised unigram + bigram Naive Bayes for text classifiers
(`benchmarks/quality_classifiers.py`), the most frequent tag per word for
taggers (`benchmarks/experiment_helpers.py`). Scores the fixed 200-item slice
(200 items spread evenly through the test split, which builders may order by
label), committed as `kseq/presets/slices/<preset>.test200.tsv`
for the tests to re-score. `--compare RUN` measures another run of the same
recipe at another size (its float16 file size and scores): what the shipped
size costs. With `--write-weights` the model is written in float16
(`tools/preset_weights.py`) and re-scored after reloading; if that costs more
than 0.2 points of the headline score on the full test split it is written in
float32. Writes `benchmarks/results/card_<preset>.json`, the catalog entry and
`zoo/<preset>/CARD.md`'s measured block.
"""

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), os.path.join(ROOT, "tools")]
import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import preset_card  # noqa: E402 (tools/: slices, licences, the card's markers)
import preset_weights  # noqa: E402 (tools/: the release-time writers)
from experiment_helpers import most_frequent_tag_baseline  # noqa: E402 (benchmarks/)
from quality_classifiers import naive_bayes  # noqa: E402 (benchmarks/)
from kseq import zoo  # noqa: E402
from kseq.metrics.classification_scores import classification_scores  # noqa: E402
from kseq.presets import catalog  # noqa: E402
from kseq.training import load_trained  # noqa: E402

SLICE = 200
WORST_FLOAT16_COST = 0.002  # 0.2 points of the headline score


def headline_key(task):
    return "token_accuracy" if task == "tagger" else "accuracy"


def as_text_pairs(pairs):
    """Tagger items `(words, tags)` as the `words<TAB>tags` strings a slice holds."""
    return [(" ".join(a) if isinstance(a, (list, tuple)) else a,
             " ".join(b) if isinstance(b, (list, tuple)) else b) for a, b in pairs]


def scores(model, pairs, task):
    """The task's scores on `pairs`, without the per-class tables."""
    result = model.evaluate_pairs(pairs).to_dict()
    keep = {k: result[k] for k in (headline_key(task), "macro_f1", "sentence_accuracy", "mcc")
            if k in result}
    if "spam" in result.get("per_class", {}):
        keep["spam_recall"] = result["per_class"]["spam"]["recall"]
    keep["items"] = len(pairs)
    return keep


def baseline(task, splits, label_names):
    """The same-split baseline: Naive Bayes (text classes) or the most frequent tag."""
    if task == "tagger":
        found = most_frequent_tag_baseline(splits)
        return {"name": "most frequent tag per word (unseen words: the most frequent tag)",
                "token_accuracy": round(found["accuracy"], 4),
                "unseen_share": round(found["unseen_share"], 4)}
    truth = [label_names.index(label) for _, label in splits["test"]]
    found = classification_scores(truth, naive_bayes(splits["train"], splits["test"],
                                                     label_names), label_names)
    kept = {k: found[k] for k in ("accuracy", "macro_f1", "mcc")}
    if "spam" in label_names:
        kept["spam_recall"] = found["per_class"]["spam"]["recall"]
    return {"name": "binarised unigram + bigram Naive Bayes (add-one), trained on the train "
                    "split", **kept}


def speed(model, task, pairs):
    """Items per second at batch 64 (after one warm-up batch)."""
    inputs = [a for a, _ in as_text_pairs(pairs)]
    run = (lambda items: model.tag(items, batch_size=64)) if task == "tagger" else \
        (lambda items: model.probabilities(items, batch_size=64))
    run(inputs[:64])
    started = time.perf_counter()
    run(inputs)
    return round(len(inputs) / (time.perf_counter() - started), 1)


def samples(model, task, pairs, count=8):
    chosen = as_text_pairs(preset_card.spread(pairs, count))
    if task == "tagger":
        found = model.tag([a for a, _ in chosen])
        return [[a, " ".join(tags), b] for (a, b), (_, tags) in zip(chosen, found)]
    found = model.predict_labels([a for a, _ in chosen])
    return [[a, f"{label} ({probability:.2f})", b] for (a, b), (label, probability)
            in zip(chosen, found)]


def float16_bytes(model):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        preset_weights.save_float16_keras(model, path)
        return os.path.getsize(path)


def flat(section, prefix):
    return {f"{prefix}.{key}": value for key, value in section.items()}


def recipe_differences(run, other_run):
    """`{dotted key: [this run's value, the other's]}` over the two runs' model and training
    sections (their `recipe.json`)."""
    sides = []
    for folder in (run, other_run):
        with open(os.path.join(folder, "recipe.json"), encoding="utf-8") as handle:
            recipe = json.load(handle)
        sides.append({**flat(recipe["model"], "model"), **flat(recipe["training"], "training")})
    return {key: [sides[0].get(key), sides[1].get(key)] for key in sorted(set(sides[0]) |
            set(sides[1])) if sides[0].get(key) != sides[1].get(key)}


def compared_run(run, other_run, splits, task):
    """Another run of the recipe (another size or schedule): what differs, parameters, float16
    file, scores."""
    other = load_trained(other_run)
    return {"run": other_run, "differences": recipe_differences(run, other_run),
            "parameters": other.count_params(), "float16_bytes": float16_bytes(other),
            "valid": scores(other, splits["valid"], task),
            "test": scores(other, splits["test"], task)}


def choose_weights(model, preset, task, test_pairs, full):
    """float16 unless it costs more than 0.2 points on the full test split."""
    key = headline_key(task)
    entry = preset_weights.write_preset_weights(model, preset, float16=True)
    reloaded = scores(catalog.load_preset_model(preset), test_pairs, task)
    if full[key] - reloaded[key] > WORST_FLOAT16_COST:
        entry = preset_weights.write_preset_weights(model, preset, float16=False)
        reloaded = scores(catalog.load_preset_model(preset), test_pairs, task)
    return entry, reloaded


def history_scores(model_dir, task):
    rows = preset_card.training_history(model_dir)
    column = "val_token_accuracy" if task == "tagger" else "val_accuracy"
    return [row.get(column) for row in rows]


def shown(value):
    return "(image)" if isinstance(value, bytes) else str(value).replace("|", "\\|")


def figures_line(found, task):
    names = {"accuracy": "accuracy", "token_accuracy": "token accuracy", "macro_f1": "macro-F1",
             "sentence_accuracy": "sentence accuracy", "mcc": "MCC",
             "spam_recall": "spam recall"}
    return ", ".join(f"{names[k]} {found[k]:.4f}" for k in names if k in found)


def card_text(preset, recipe, result):
    task, test = recipe["task"], result["test"]
    weights = result["weights"]
    lines = ["## Measured (generated by `tools/classifier_card.py`)", "",
             f"* **Task**: {recipe['description']}",
             f"* **Domain**: {recipe.get('domain', '-')}. {result['limitations']}",
             f"* **Data**: builder `{recipe['data']['builder']}` {json.dumps(recipe['data'])}; "
             f"splits {json.dumps(result['splits'])}. {result['licence']}",
             f"* **Model**: {json.dumps(recipe['model'], ensure_ascii=False)}; "
             f"{result['parameters']:,} parameters; weights file "
             f"{weights['bytes'] / 1e6:.2f} MB ({weights['dtype']}, no optimizer state).",
             f"* **Training**: `{result['command']}` on {result['hardware']}"
             + (f"; {result['epochs']} epochs, validation {headline_key(task).replace('_', ' ')}"
                f" per epoch {result['validation_per_epoch']}." if result["epochs"] else "."),
             f"* **Test, full split ({test['items']:,} items)**: {figures_line(test, task)}.",
             f"* **Baseline on the same split** ({result['baseline']['name']}): "
             f"{figures_line(result['baseline'], task)}.",
             f"* **Validation split**: {figures_line(result['valid'], task)}."]
    if result.get("reloaded"):
        lines.append(f"* **As shipped** ({weights['dtype']}, reloaded), full test split: "
                     f"{figures_line(result['reloaded'], task)}.")
    if result.get("compared"):
        other = result["compared"]
        changed = "; ".join(f"{key} {theirs} instead of {ours}" for key, (ours, theirs)
                            in other["differences"].items())
        lines.append(f"* **Chosen over** the same recipe with {changed} "
                     f"({other['parameters']:,} parameters, {other['float16_bytes'] / 1e6:.1f} "
                     f"MB in float16): test {figures_line(other['test'], task)}; validation "
                     f"{figures_line(other['valid'], task)}.")
    lines += [f"* **Fixed 200-item slice** (`kseq/presets/{result['slice_file']}`, re-scored by "
              f"the tests): {figures_line(result['slice'], task)}.",
              f"* **Speed** ({result['hardware']}): {result['items_per_second']} items/s "
              f"(batch 64, Python API).",
              f"* **Reproduce the figures**: `.venv/bin/python tools/classifier_card.py --preset "
              f"{preset}` (JSON: `benchmarks/results/card_{preset}.json`).",
              "", "## Samples (test split)", "", "| input | kseq | reference |", "|---|---|---|"]
    lines += [f"| {shown(a)} | {shown(h)} | {shown(b)} |" for a, h, b in result["samples"]]
    verb = "tag" if task == "tagger" else "predict_labels"
    loader = "tagger" if task == "tagger" else "classifier"
    lines += ["", "```python", "import kseq",
              f'model = kseq.zoo.{loader}("{preset}")  # weights checked against the SHA-256',
              f"model.{verb}([{json.dumps(result['samples'][0][0], ensure_ascii=False)}])",
              "```"]
    return "\n".join(lines)


def measure(args):
    recipe = zoo.load_recipe(args.preset)
    task = recipe["task"]
    splits = zoo.build_data(recipe)
    model = load_trained(args.model) if args.model else catalog.load_preset_model(args.preset)
    label_names = model.tag_names if task == "tagger" else model.label_names
    result = {"preset": args.preset, "command": args.command, "limitations": args.limitations,
              "hardware": "2 CPU cores, flags " + " ".join(harness.cpu_flags()),
              "splits": {k: len(v) for k, v in splits.items()},
              "parameters": model.count_params()}
    history = history_scores(args.model, task)
    result["epochs"] = len(history) or None
    result["validation_per_epoch"] = history
    result["licence"] = preset_card.licence_of(recipe["data"]["builder"])
    result["test"] = scores(model, splits["test"], task)
    result["valid"] = scores(model, splits["valid"], task)
    result["baseline"] = baseline(task, splits, label_names)
    cut = as_text_pairs(preset_card.spread(splits["test"], SLICE))
    result["slice_file"] = preset_card.write_slice(args.preset, cut, recipe["data"]["builder"])
    result["slice"] = scores(model, cut, task)
    result["items_per_second"] = speed(model, task, splits["test"])
    result["samples"] = samples(model, task, splits["test"])
    if args.compare:
        result["compared"] = compared_run(args.model, args.compare, splits, task)
    if args.write_weights:
        _, result["reloaded"] = choose_weights(model, args.preset, task, splits["test"],
                                               result["test"])
    key = headline_key(task)
    result["weights"] = preset_weights.update_weights_entry(
        args.preset, slice_200={"file": result["slice_file"], key: result["slice"][key],
                                "macro_f1": result["slice"]["macro_f1"]})
    return recipe, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--model", help="a run folder or .keras file; default: the shipped file")
    parser.add_argument("--write-weights", action="store_true")
    parser.add_argument("--compare", help="a run folder of the same recipe at another size")
    parser.add_argument("--command", default="(see the card)", help="how it was trained")
    parser.add_argument("--limitations", default="Trained on one domain; see the samples.")
    args = parser.parse_args()
    if zoo.load_recipe(args.preset)["task"] not in ("classifier", "tagger"):
        raise SystemExit(f"classifier_card.py: {args.preset} is not a classifier or tagger "
                         f"preset (translators and captioners: tools/preset_card.py).")
    recipe, result = measure(args)
    result["cpu_flags"] = harness.cpu_flags()
    path = os.path.join(ROOT, "benchmarks", "results", f"card_{args.preset}.json")
    harness.write(f"card_{args.preset}", result, path=path)
    os.makedirs(os.path.join(ROOT, "zoo", args.preset), exist_ok=True)
    preset_card.replace_card_block(os.path.join(ROOT, "zoo", args.preset, "CARD.md"),
                                   args.preset, card_text(args.preset, recipe, result))


if __name__ == "__main__":
    main()
