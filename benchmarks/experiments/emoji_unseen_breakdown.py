"""Where the unseen-base emoji captions fail (issue 18): chrF per kind of emoji.

The `test_unseen_base` subset of `emoji_captions("en")` holds emoji whose base
no training emoji shares. Many are flags, whose names are country names that
no picture of a flag spells out, and keycaps. This script scores the shipped
`emoji_en_captioner` preset (greedy, beam 4, MBR 16: `caption_quality.SEARCHES`)
and the nearest-neighbour caption copy on that subset, split by kind:

- `flag`: two regional indicators, or a black flag with tag characters;
- `keycap`: a sequence with U+20E3 (combining enclosing keycap);
- `other`: the rest (objects, symbols, animals, people without a seen base);
- `all`: the whole subset (corpus chrF is not the mean of the kinds');

plus the share of each kind's caption words that no training caption has
(no word-level captioner or caption copy can produce those words).

It scores the shipped weights (6 minutes of training), not the 10-minute
models of `quality_emoji_captions.py`, so its figures sit beside that
script's, not in its table. Writes `benchmarks/experiments/results/emoji_unseen_breakdown.json`.

    .venv/bin/python benchmarks/experiments/emoji_unseen_breakdown.py
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import collections
import time

# caption_quality: benchmarks/, the script's folder
import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
from caption_quality import (SEARCHES, machine, metric_notes, nearest_neighbour_captions,
                             text_scores, write_result)
from kseq import zoo
from kseq.data.datasets.emoji_captions import caption_of_name, emoji_names

PRESET = "emoji_en_captioner"
KEYCAP = "\u20e3"
REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)
BLACK_FLAG, TAGS = "\U0001F3F4", range(0xE0020, 0xE0080)


def kind_of(sequence):
    """`"flag"`, `"keycap"` or `"other"` (module docstring)."""
    points = [ord(c) for c in sequence]
    if len(points) == 2 and all(p in REGIONAL_INDICATORS for p in points):
        return "flag"
    if sequence.startswith(BLACK_FLAG) and any(p in TAGS for p in points[1:]):
        return "flag"
    return "keycap" if KEYCAP in sequence else "other"


def kinds_by_caption():
    """`{English caption: kind}` of every emoji the builder captions."""
    return {caption_of_name(names["en"]): kind_of(sequence)
            for sequence, names in emoji_names().items() if "en" in names}


def unseen_word_share(captions, training_words):
    words = [word for caption in captions for word in caption.split()]
    return round(sum(word not in training_words for word in words) / max(1, len(words)), 4)


def main():
    started = time.perf_counter()
    splits = zoo.build_data(zoo.load_recipe(PRESET))  # the recipe's 96 px renders
    train, unseen = splits["train"], splits["test_unseen_base"]
    kinds = kinds_by_caption()
    groups = collections.defaultdict(list)
    for index, (_, caption) in enumerate(unseen):
        groups[kinds[caption]].append(index)
    groups["all"] = list(range(len(unseen)))  # corpus chrF is not a mean of the kinds'
    training_words = {word for _, caption in train for word in caption.split()}
    model = zoo.captioner(PRESET)
    image_size = model.preprocessor.image_size
    # The copy over the whole test split, as quality_emoji_captions.py computes it, then the
    # subset's rows: the same figure, not one from a differently batched feature pass.
    copied = dict(zip(map(id, splits["test"]),
                      nearest_neighbour_captions(train, splits["test"], image_size)))
    hypotheses = {"nearest_neighbour": [copied[id(item)] for item in unseen]}
    for search, options in SEARCHES:
        hypotheses[f"kseq_{search}"] = model.caption([image for image, _ in unseen], **options)
    result = {"preset": PRESET, "subset": "test_unseen_base", "items": len(unseen),
              "kinds": {}, "metrics": metric_notes()}
    for kind, indices in sorted(groups.items()):
        references = [unseen[i][1] for i in indices]
        result["kinds"][kind] = {
            "items": len(indices),
            "reference_words_not_in_training": unseen_word_share(references, training_words),
            "rows": {row: text_scores([captions[i] for i in indices], references)
                     for row, captions in hypotheses.items()},
            "samples": [[unseen[i][1]] + [hypotheses[row][i] for row in hypotheses]
                        for i in indices[:: max(1, len(indices) // 6)][:6]]}
    result["sample_columns"] = ["reference"] + list(hypotheses)
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"] = machine()
    write_result(result, "benchmarks/experiments/results/emoji_unseen_breakdown.json")


if __name__ == "__main__":
    main()
