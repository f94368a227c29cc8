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
