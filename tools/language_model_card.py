"""Model-card figures of a language-model preset, and the weights file it ships.

    # a kseq train run folder -> the float16 weights file, the catalog entry, the benchmark, the card
    .venv/bin/python tools/language_model_card.py --preset debian_descriptions_lm \\
        --model runs/debian_descriptions_lm --pretraining runs/debian_all_sections_lm \\
        --write-weights --command "tools/train_debian_descriptions_lm.sh (kseq train ...)"
    # the shipped weights -> the benchmark and the card (the weights file is not rewritten)
    .venv/bin/python tools/language_model_card.py --preset debian_descriptions_lm

With `--write-weights` the run's model is written in float16 (`tools/preset_weights.py`)
and its test perplexity measured before and after reloading; if float16 costs more than
0.5% perplexity the file is written in float32. Then `benchmarks/bench_language_model.py`
runs on the shipped preset (or `--bench JSON` reuses one of its results): test perplexity
next to the unigram, interpolated and Kneser-Ney bigram / trigram models on the same
tokens, true against wrong category, Naive Bayes labels of sampled texts, sampling speed
next to keras-hub. Writes a fixed 200-text slice of the test split (`category<TAB>text`,
spread through the split, which is ordered by section) as
`kseq/presets/slices/<preset>.test200.tsv` with its perplexity in the catalog entry (the
tests re-score it), `benchmarks/results/card_<preset>.json` and `zoo/<preset>/CARD.md`'s
measured block with ten sampled texts per category.
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), os.path.join(ROOT, "tools")]
import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import bench_language_model  # noqa: E402 (benchmarks/: the quality and speed rows)
import preset_card  # noqa: E402 (tools/: spread, the card's markers, training history)
import preset_weights  # noqa: E402 (tools/: the release-time writers)
from kseq import zoo  # noqa: E402
from kseq.presets import catalog  # noqa: E402
from kseq.training import load_trained  # noqa: E402

SLICE = 200
WORST_FLOAT16_COST = 0.005  # 0.5% perplexity on the full test split
LICENCE = ("Debian package descriptions (bookworm main, read from apt's Packages and "
           "Translation-en lists): each is part of its package's debian/control and under "
           "that package's DFSG-free licence.")
NOTICE = (LICENCE + " The 200 texts of this slice are the long descriptions' first "
          "paragraphs of Debian packages in the sections named in the first column; "
          "/usr/share/doc/<package>/copyright of each package gives its terms.\n")


def perplexity(model, pairs):
    result = model.perplexity(pairs)
    return {"perplexity": round(result.perplexity, 3),
            "cross_entropy": round(result.cross_entropy, 5), "tokens": result.tokens,
            "texts": len(pairs)}


def choose_weights(model, preset, test, full):
    """float16 unless it costs more than 0.5% test perplexity; returns the entry and the
    reloaded model's figures."""
    entry = preset_weights.write_preset_weights(model, preset, float16=True)
    reloaded = perplexity(catalog.load_preset_model(preset), test)
    if reloaded["perplexity"] > full["perplexity"] * (1 + WORST_FLOAT16_COST):
        entry = preset_weights.write_preset_weights(model, preset, float16=False)
        reloaded = perplexity(catalog.load_preset_model(preset), test)
    return entry, reloaded


def write_slice(preset, pairs):
    folder = os.path.join(ROOT, "kseq", "presets", "slices")
    path = os.path.join(folder, f"{preset}.test200.tsv")
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(f"{category}\t{text}\n" for category, text in pairs))
    with open(os.path.join(folder, f"{preset}.NOTICE.txt"), "w", encoding="utf-8") as handle:
        handle.write(NOTICE)
    return os.path.relpath(path, os.path.join(ROOT, "kseq", "presets"))


def row(name, figure, best=None):
    return f"| {name} | {figure:.2f} |" + (f" {figure / best:.3f} |" if best else " |")


def training_line(result):
    """The card's training line: the command(s), the hardware, validation per epoch (of the
    pre-training run too when there was one)."""
    epochs = result["validation_per_epoch"]
    line = (f"* **Training**: `{result['command']}` on {result['hardware']}; "
            f"{len(epochs)} epochs, validation perplexity per epoch {epochs}")
    if result.get("pretraining_per_epoch"):
        first = result["pretraining_per_epoch"]
        line += (f" (fine-tuning; the pre-training run before it: {len(first)} epochs, "
                 f"validation perplexity per epoch {first})")
    return line + "."


def card_text(preset, recipe, result):
    bench, weights = result["bench"], result["weights"]
    floors = bench["floors"]
    model_ppl = bench["perplexity"]["model"]
    best = bench["perplexity"][bench["best_ngram"]]
    conditioning, samples, speed = bench["conditioning"], bench["samples"], bench["speed"]
    met = lambda key: "met" if floors[key]["met"] else "**not met**"  # noqa: E731
    lines = ["## Measured (generated by `tools/language_model_card.py`)", "",
             f"* **Task**: {recipe['description']}",
             f"* **Domain**: {recipe.get('domain', '-')}. English package descriptions "
             "of the six sections; other text was not measured.",
             f"* **Data**: builder `{recipe['data']['builder']}` {json.dumps(recipe['data'])}; "
             f"texts {json.dumps(bench['texts'])}"
             + (f"; pre-trained on {json.dumps(bench['trained_on'][1:])[1:-1]}"
                if len(bench.get("trained_on", [])) > 1 else "") + f". {LICENCE}",
             f"* **Model**: {json.dumps(recipe['model'], ensure_ascii=False)}; "
             f"{result['parameters']:,} parameters; weights file "
             f"{weights['bytes'] / 1e6:.2f} MB ({weights['dtype']}, no optimizer state).",
             training_line(result),
             f"* **Test perplexity** ({bench['test_tokens']:,} tokens of "
             f"{bench['texts']['test']:,} texts, the model's WordPiece tokens, end token "
             f"included; each text with its own section): **{model_ppl:.2f}**, "
             f"{model_ppl / best:.3f}x the best n-gram ({bench['best_ngram']}, floor 0.8: "
             f"{met('perplexity_vs_best_ngram')}).",
             "", "| model (same tokens, same test texts) | perplexity | x best n-gram |",
             "|---|---|---|", row(f"kseq `{preset}`", model_ppl, best)]
    for name, figure in sorted(bench["perplexity"].items(), key=lambda item: -item[1]):
        if name not in ("model", "model_cross_entropy"):
            lines.append(row(name.replace("_", " "), figure, best))
    lines += ["", f"The n-gram models count every train text the model learnt from "
              f"({bench.get('ngram_train_texts', bench['texts']['train']):,} texts"
              f"{', both stages' if len(bench.get('trained_on', [])) > 1 else ''}), tune their "
              "interpolation weights (EM) or Kneser-Ney discounts on the valid split and never "
              "see the section.", "",
              f"* **The section is worth it**: test perplexity {conditioning['perplexity_true']:.2f}"
              f" with each text's own section, {conditioning['perplexity_wrong']:.2f} with a "
              f"wrong one (the mean cross-entropy over the five others): ratio "
              f"{conditioning['ratio']:.3f} (floor 0.95: {met('true_vs_wrong_category')}).",
              f"* **Samples keep their section**: a Naive Bayes trained on the real train texts "
              f"(it labels {samples['naive_bayes_on_real_test']:.1%} of the real test texts "
              f"correctly) gives {samples['accuracy']:.1%} of {bench['samples_per_category']}"
              f" sampled texts per section (top-p {samples['top_p']}, empty prompt) the section "
              f"they were generated for (chance {samples['chance']:.1%}; floor 60%: "
              f"{met('sample_category_accuracy')}); per section "
              f"{json.dumps({k: round(v, 2) for k, v in samples['per_category'].items()})}; "
              f"{samples['copies_of_training_texts']:.1%} copy a training text.",
              f"* **Speed** (sampling, top-p 0.9, batch {speed['batch']}, "
              f"{speed['generated_tokens_per_row']} tokens a row): kseq "
              f"{speed['tokens_per_second']['kseq']:,.0f} tokens/s, with XLA "
              f"{speed['tokens_per_second']['kseq_xla']:,.0f}; keras-hub's TopPSampler on a "
              f"same-size keras-hub decoder (XLA, as CausalLM.generate) "
              f"{speed['tokens_per_second']['keras_hub_top_p_xla']:,.0f}: ratio "
              f"{speed['kseq_vs_keras_hub']} ({speed['kseq_xla_vs_keras_hub']} with XLA); "
              f"load average {bench['machine']['load_average']}.",
              f"* **As shipped** ({weights['dtype']}, reloaded): test perplexity "
              f"{result['reloaded']['perplexity']:.2f} (float32 run: "
              f"{result['test']['perplexity']:.2f})." if result.get("reloaded") else
              f"* **Test perplexity of the shipped file**: {result['test']['perplexity']:.2f}.",
              f"* **Fixed 200-text slice** (`kseq/presets/{weights['slice_200']['file']}`, "
              f"re-scored by the tests): perplexity {weights['slice_200']['perplexity']:.2f}.",
              f"* **Reproduce**: `.venv/bin/python tools/language_model_card.py --preset "
              f"{preset}` (JSON: `benchmarks/results/card_{preset}.json`, "
              f"`benchmarks/results/bench_language_model.json`).", "",
              "## Ten sampled texts per section", "",
              f"Drawn with `model.generate([\"\"] * {bench['samples_per_category']}, "
              "category=SECTION, sample=True, top_p=0.9, seed=...)` (the first ten of the "
              "benchmark's samples), unedited.", ""]
    for category, texts in bench["sample_texts"].items():
        lines += [f"### {category}", ""] + [f"{i}. {text}" for i, text in
                                             enumerate(texts, 1)] + [""]
    lines += ["```python", "import kseq",
              f'model = kseq.zoo.language_model("{preset}")  # weights checked against the SHA-256',
              'model.generate([""], category="games", sample=True, top_p=0.9, seed=1)',
              'model.generate(["A tool that"], category="science")  # greedy continuation',
              'model.perplexity([("sound", "A MIDI sequencer for the command line.")]).summary()',
              "```"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--model", default=None, help="a kseq train run folder")
    parser.add_argument("--write-weights", action="store_true")
    parser.add_argument("--command", default=None, help="the training command (for the card)")
    parser.add_argument("--pretraining", default=None,
                        help="the run folder --model was fine-tuned from (its history)")
    parser.add_argument("--bench", default=None, help="reuse this bench_language_model JSON")
    args = parser.parse_args()
    recipe = {k: v for k, v in catalog.preset_recipe(args.preset).items() if k != "weights"}
    splits = zoo.build_data(recipe)
    result = {"preset": args.preset, "hardware": "2 shared CPU cores, flags "
              + " ".join(harness.cpu_flags())}
    if args.write_weights:
        if not args.model:
            raise SystemExit("language_model_card.py: --write-weights needs --model RUN")
        model = load_trained(args.model)
        result["test"] = perplexity(model, splits["test"])
        entry, result["reloaded"] = choose_weights(model, args.preset, splits["test"],
                                                   result["test"])
    model = catalog.load_preset_model(args.preset)
    if "test" not in result:
        result["test"] = perplexity(model, splits["test"])
    pairs = preset_card.spread(splits["test"], SLICE)
    slice_entry = {"file": write_slice(args.preset, pairs),
                   "perplexity": perplexity(model, pairs)["perplexity"]}
    result["weights"] = preset_weights.update_weights_entry(args.preset, slice_200=slice_entry)
    result["parameters"] = model.count_params()
    previous = harness.read(os.path.join(ROOT, "benchmarks", "results",
                                         f"card_{args.preset}.json")) \
        if os.path.isfile(os.path.join(ROOT, "benchmarks", "results",
                                       f"card_{args.preset}.json")) else {}
    result["command"] = args.command or previous.get("command", f"kseq train {args.preset}")
    for key, run in (("validation_per_epoch", args.model),
                     ("pretraining_per_epoch", args.pretraining)):
        rows = preset_card.training_history(run)
        result[key] = [round(r["val_perplexity"], 1) for r in rows
                       if "val_perplexity" in r] or previous.get(key, [])
    del model
    if args.bench:
        result["bench"] = harness.read(args.bench)
    else:
        result["bench"] = bench_language_model.main(["--preset", args.preset])
    result["bench"].setdefault("machine", harness.machine())
    harness.write(f"card_{args.preset}", result)
    folder = os.path.join(ROOT, "zoo", args.preset)
    os.makedirs(folder, exist_ok=True)
    preset_card.replace_card_block(os.path.join(folder, "CARD.md"), args.preset,
                                   card_text(args.preset, recipe, result))
    print(f"wrote zoo/{args.preset}/CARD.md", flush=True)


if __name__ == "__main__":
    main()
