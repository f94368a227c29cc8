"""Quality bar of emoji captions (issue 18): baselines and kseq captioners, one run, one split.

Rows, all scored on the same test split of `emoji_captions("en")` (split by the
emoji's code-point sequence) and on its two parts, `test_seen_base` (a skin
tone or gender variant of an emoji whose base is in training) and
`test_unseen_base`:

- `most_frequent`: one training caption for every image. Every English name
  is unique in training, so "most frequent" ties across all of them; the tie
  is broken by the caption whose words are most common in training (the
  highest mean training count of its whitespace tokens), a "typical" name;
- `nearest_neighbour`: the caption of the training image whose frozen
  EfficientNet-Lite0 ImageNet features (global average of the grid, images
  decoded by the captioners' own image function) have the highest cosine with
  the test image's;
- `kseq_<model>_greedy`, `_beam4` and `_mbr16` (minimum Bayes risk over a beam of 16,
  `caption(mbr=True)`, chosen on validation) for two captioners trained by
  `kseq.training.train` for the same `--minutes` each: `lite0`, the
  `emoji_en_captioner` preset (frozen Lite0 grid, trained on cached features,
  + a Transformer decoder), and `small_cnn`, the same recipe with a SmallCnn
  trained from scratch at 64 px. Both train until the clock stops them
  (`--epochs` caps that), so they compare at equal training time.

Each row has BLEU and chrF (sacrebleu, default settings; the signatures are
in the result), CIDEr-D (`kseq.metrics.cider`), exact match and the training
minutes. Writes `benchmarks/results/quality_emoji_captions.json` and prints it.
Run folders go to `--output/<model>`, emptied first (a fresh run each time).
The baselines, training and scoring are `caption_quality`'s (shared with the
Tux Paint and multilingual scripts).

    .venv/bin/python benchmarks/quality_emoji_captions.py --minutes 10
    .venv/bin/python benchmarks/quality_emoji_captions.py --minutes 10 --balance-bases 6 \
        --result benchmarks/results/quality_emoji_captions_balanced.json
    .venv/bin/python benchmarks/quality_emoji_captions.py --quick   # a smoke run, ~2 minutes

Measured (the method notes docs/results.md held; its table keeps the headline figures):

**Real images: emoji** (`benchmarks/quality_emoji_captions.py --minutes 10`, JSON in
`benchmarks/results/quality_emoji_captions.json`, 2 CPU cores shared with a background
training, 25 minutes in all; every row on the same 756 test emoji, split by code points;
CIDEr is CIDEr-D; MBR = `caption(beam_size=16, mbr=True, mbr_temperature=2,
length_penalty=None)`, the setting chosen on the validation split):

| row (training) | chrF all / seen-base variants (442) / unseen base (314) | BLEU all | CIDEr-D all | exact all |
|---|---|---|---|---|
| most frequent caption | 31.4 / 38.1 / 10.1 | 5.1 | 0.20 | 0.000 |
| nearest-neighbour copy, frozen Lite0 features | 68.8 / 79.0 / **19.1** | 38.8 | 3.11 | 0.000 |
| kseq, frozen Lite0 + Transformer, greedy (10 min) | 76.8 / 89.5 / 16.4 | 60.6 | 4.41 | 0.295 |
| kseq, frozen Lite0 + Transformer, beam 4 (10 min) | 77.2 / 89.5 / 16.7 | 64.3 | 4.44 | 0.302 |
| kseq, frozen Lite0 + Transformer, MBR (10 min) | 78.8 / 91.7 / 18.2 | 60.2 | 4.41 | 0.283 |
| kseq, SmallCnn from scratch, greedy (10 min) | 78.1 / 92.3 / 13.6 | 72.5 | 4.81 | 0.437 |
| kseq, SmallCnn from scratch, beam 4 (10 min) | 78.9 / 92.6 / 13.4 | **80.5** | 4.85 | 0.443 |
| kseq, SmallCnn from scratch, MBR (10 min) | **81.4** / **95.9** / 15.3 | 74.4 | **4.86** | **0.450** |

The captioners beat both baselines on the whole test split and on unseen skin-tone / gender
variants of emoji seen in training (exact names for 48–77% of them), but not on emoji whose
base was never seen: there the nearest-neighbour copy's borrowed words score higher chrF
(19.1 against 18.2 with MBR, 16.7 with beam 4). 51.5% of the words of those 314 names never
occur in a training caption (79% of the names hold one), so a word-level captioner cannot
say them and scores only on shared characters. The pretrained backbone does not beat the
from-scratch CNN at equal minutes on seen bases (emoji are flat, synthetic pictures, far
from ImageNet photographs), but generalises better to unseen ones (18.2 against 15.3).
The shipped `emoji_en_captioner` (the same recipe, `kseq train`, 60 epochs) scores 77.4
greedy / 77.6 beam 4 on the whole test split (`zoo/emoji_en_captioner/CARD.md`). Split by
kind (`benchmarks/experiments/emoji_unseen_breakdown.py`, the shipped weights), the unseen bases are 56
flags (75% of their words, country names, never in a training caption: MBR 10.2 chrF,
nearest neighbour 8.0), 2 keycaps and 256 others (47% unseen words: MBR 18.9, nearest
neighbour 21.0) — the copy's lead is on the others (objects, symbols, animals), where the
captioner often reaches for a training name with a person or a button in it ("dog face" →
"man bear", "mobile phone off" → "Japanese discount button"). Over all 314 unseen bases the
shipped weights score 17.6 with MBR against the copy's 19.1. On the **validation** split's
133 unseen bases the same recipe beats the copy (MBR 20.7 against 19.1;
`benchmarks/experiments/select_emoji_captioner.py`: the recipe and two variants, 6 minutes of training
each): a 256-wide decoder scored a little higher there (MBR 20.8, greedy 20.0 against 18.1,
82.0 on all of validation against 81.5), within the noise of 133 names, and was not
adopted: its float16 file (estimated 4.5 MB against 1.8 MB) with the en→fr attention
preset (~12 MB) would take the shipped weights past issue 19's 50 MB.

Is the unseen-base gap real? `benchmarks/experiments/emoji_gap_significance.py` runs sacrebleu's paired
bootstrap (1,000 resamples) and approximate randomisation (10,000 trials) of the shipped
weights against the copy: on the 314 test unseen bases greedy (16.1, −3.0 chrF, p 0.006 /
0.010) and beam 4 (15.2, −3.9, p 0.003 / 0.002) are truly below the copy; MBR (17.6, −1.5,
p 0.10 / 0.26) is within the noise; every search is far above it on seen bases (+11 to +13,
p 0.001). On the validation split's 133 unseen bases no search differs from the copy
(p ≥ 0.18; the copy's 95% interval is ±4.3 chrF there). **Base balancing**
(`emoji_captions(balance_bases=6)`, each base repeated to at least 6 training examples an
epoch; `benchmarks/experiments/select_emoji_captioner.py`, 6 minutes each, results in
`benchmarks/experiments/results/select_emoji_balance.json`) lifted the validation unseen bases from 18.4 to 21.0 greedy /
20.9 MBR (copy 19.1) at a cost on seen bases (88.8 → 79.4 greedy), but not the test split:
`quality_emoji_captions.py --balance-bases 6` (`quality_emoji_captions_balanced.json`, an
AVX2 machine) gives unseen bases 17.0 greedy / 16.0 beam 4 / 18.0 MBR and seen 86.4 / 85.7 /
90.1 — unseen greedy +0.6 and MBR −0.2 against the table above, seen bases 3 and 1.6 points
lower, still below the copy — so the recipe keeps `balance_bases=0`. 133
validation names are too few to choose by a 1–2 point difference: the unchanged recipe
itself scored 18.4 MBR there in this run (36 epochs in 6 minutes on the slower machine)
against 20.7 in the earlier one.
"""

import os
import time

import harness  # benchmarks/harness.py, before TensorFlow
# caption_quality: benchmarks/, the script's folder
from caption_quality import (SMALL_CNN, baseline_rows, caption_arguments, captioner_rows, machine,
                             metric_notes, result_path, run_overrides, train_captioner,
                             write_result)
from kseq import zoo

NAME = "quality_emoji_captions"
PRESET = "emoji_en_captioner"
SUBSETS = ("test", "test_seen_base", "test_unseen_base")
QUICK = {"train": 300, "valid": 20, "test": 40}  # --quick: images per split, one epoch


def quality_bar(rows):
    """The issue's bar: each captioner row above both baselines on chrF, on both subsets."""
    by_name = {row["row"]: row["scores"] for row in rows}
    bar = {}
    for row in rows:
        if not row["row"].startswith("kseq_"):
            continue
        bar[row["row"]] = all(
            row["scores"][subset].get("chrf", 0) > by_name[baseline][subset].get("chrf", 0)
            for subset in ("test_seen_base", "test_unseen_base")
            for baseline in ("most_frequent", "nearest_neighbour"))
    return bar


def main(argv=None):
    parser = caption_arguments(__doc__, NAME, 10, f"{QUICK} images, one epoch")
    parser.add_argument("--models", nargs="+", default=["lite0", "small_cnn"],
                        choices=["lite0", "small_cnn"])
    parser.add_argument("--balance-bases", type=int, default=None,
                        help="emoji_captions(balance_bases=...) for training (default: the "
                             "recipe's, none); with --quick the image cap counts repeats")
    args = harness.parse(parser, argv)
    args.quick = args.quick or args.smoke  # --smoke: the quick run
    started = time.perf_counter()
    recipe = zoo.load_recipe(PRESET)
    image_size = (recipe["model"]["image_size"],) * 2

    models, trained = {}, {}
    data = {} if args.balance_bases is None else {"balance_bases": args.balance_bases}
    if args.quick:
        data["limit"] = {"train": QUICK["train"], "valid": QUICK["valid"]}
    for name in args.models:
        overrides = run_overrides({} if name == "lite0" else SMALL_CNN, data or None,
                                  args.epochs, args.quick)
        model, splits, facts = train_captioner(PRESET, os.path.join(args.output, name),
                                               args.minutes, overrides)
        models[name], trained[name] = facts, model
    test = splits["test"][:QUICK["test"]] if args.quick else splits["test"]
    kept = {id(pair) for pair in test}
    subsets = {name: [pair for pair in splits[name] if id(pair) in kept] for name in SUBSETS}

    rows, _ = baseline_rows(splits["train"], test, subsets, image_size)
    for name, model in trained.items():
        rows += captioner_rows(name, model, models[name], test, subsets)[0]

    result = {
        "preset": PRESET, "quick": args.quick, "minutes_per_model": args.minutes,
        "data": {"builder": "emoji_captions", "lang": recipe["data"]["lang"],
                 "image_size": recipe["data"]["image_size"],
                 "balance_bases": data.get("balance_bases",
                                           recipe["data"].get("balance_bases", 0)),
                 "sizes": {"train_with_repeats": len(splits["train"]),
                           "train": len({id(item) for item in splits["train"]}),
                           "valid": len(splits["valid"])}
                 | {name: len(pairs) for name, pairs in subsets.items()}},
        **metric_notes(),
        "rows": rows,
        "bar_captioner_beats_both_baselines_on_chrf_on_both_subsets": quality_bar(rows),
        "models": models,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "machine": machine(),
    }
    return write_result(result, result_path(args, NAME))


if __name__ == "__main__":
    main()
