"""Helpers of the quality benchmarks and experiments that are not kseq's public API.

- `ten_folds`: stratified 10-fold cross-validation of `(text, label)` pairs
  (`quality_classifiers.py`, `experiments/select_classifiers.py`,
  `experiments/trec_wordnet_probe.py`);
- `most_frequent_tag_baseline`: the tagging baseline of `quality_turkish_pos.py`;
- `base_subsets` / `base_subset_rows`: emoji whose base a training emoji has
  (`experiments/select_emoji_captioner.py`, `experiments/emoji_gap_significance.py`);
- `monotone_alignment_mass`: how diagonal an attention matrix is
  (`experiments/alignment_numbers.py`).

Example (with `benchmarks/` on `sys.path`):
>>> import numpy as np
>>> monotone_alignment_mass(np.eye(4))
1.0
>>> pairs = [(f"text {i}", "spam" if i % 4 == 0 else "ham") for i in range(40)]
>>> folds = ten_folds(pairs)
>>> len(folds), sorted(len(test) for _, test in folds) == [4] * 10
(10, True)
>>> sorted(pairs[i][1] for i in folds[0][1])
['ham', 'ham', 'ham', 'spam']
>>> base_subsets(train=["👍", "🐶"], test=["👍🏽", "🐱"])
(['👍🏽'], ['🐱'])
>>> splits = {"train": [(["ev", "mi"], ["NOUN", "PRT"])], "valid": [],
...           "test": [(["ev", "ne"], ["NOUN", "PRON"])]}
>>> result = most_frequent_tag_baseline(splits)
>>> result["accuracy"], result["seen_accuracy"], result["unseen_share"]
(0.5, 1.0, 0.5)
"""

import collections
from collections.abc import Mapping

import numpy as np

from kseq.arguments import check_choice, check_int
from kseq.data.datasets.emoji_captions import base_of, caption_of_name, emoji_names
from kseq.data.datasets.keyed_split import unit_of
from kseq.errors import KseqError


def ten_folds(pairs, seed=0):
    """Stratified 10-fold cross-validation: a list of 10 `(train_indices, test_indices)`.

    Each index of `pairs` (`(text, label)` pairs) is in exactly one test fold.
    Duplicate texts share a fold (stratified by the label of their first
    occurrence); per label, distinct texts in seeded-hash order (`keyed_split.unit_of`)
    go to the fold holding the fewest of that label, then the fewest in all. Index
    lists are sorted.
    """
    pairs = _check_text_label_pairs(pairs)
    seed = check_int("seed", seed, minimum=0)
    groups = {}
    for index, (text, label) in enumerate(pairs):
        groups.setdefault(text, (label, []))[1].append(index)
    folds = [[] for _ in range(10)]
    for label in sorted({label for label, _ in groups.values()}):
        of_label = [0] * 10
        texts = sorted((t for t, (lab, _) in groups.items() if lab == label),
                       key=lambda t: (unit_of(t, seed), t))
        for text in texts:
            fold = min(range(10), key=lambda k: (of_label[k], len(folds[k]), k))
            of_label[fold] += len(groups[text][1])
            folds[fold].extend(groups[text][1])
    every = range(len(pairs))
    return [([i for i in every if i not in held], sorted(held))
            for held in (set(fold) for fold in folds)]


def _check_text_label_pairs(pairs):
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__len__"):
        raise KseqError(f"`pairs` must be a list of (text, label) pairs. Received: pairs={pairs!r}")
    pairs = list(pairs)
    for index, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                and all(isinstance(item, str) for item in pair)):
            raise KseqError(f"`pairs` must hold (text, label) string pairs; item {index} is not "
                            f"one. Received: pairs[{index}]={pair!r}")
    if len(pairs) < 10:
        raise KseqError(f"`pairs` must hold at least 10 pairs for 10 folds. "
                        f"Received: {len(pairs)} pairs")
    return pairs


def most_frequent_tag_baseline(splits, fit_on=("train",), evaluate_on="test"):
    """Token accuracy of tagging each token with its most frequent training tag.

    Counts come from the splits in `fit_on`. A token seen there gets its most
    frequent tag (a tie goes to the tag more frequent overall, then the first
    by name); an unseen one gets the most frequent tag overall. Tokens are
    compared exactly (case-sensitive).

    Args:
        splits: a dict of split name -> list of `(tokens, tags)` pairs.
        fit_on: split names to count tags in (never `evaluate_on`).
        evaluate_on: the split name to score.

    Returns a dict: `accuracy`, `seen_accuracy`, `unseen_accuracy` (None
    without unseen tokens; likewise `seen_accuracy`), `unseen_share`, `tokens`,
    `unseen_tokens`, `default_tag`.
    """
    fit_on = [fit_on] if isinstance(fit_on, str) else list(fit_on)
    if not isinstance(splits, Mapping):
        raise KseqError(f"`splits` must be a dict of split name -> (tokens, tags) pairs. "
                        f"Received: splits={type(splits).__name__}")
    for name in fit_on + [evaluate_on]:
        check_choice("fit_on" if name != evaluate_on else "evaluate_on", name, tuple(splits))
    if evaluate_on in fit_on:
        raise KseqError(f"`fit_on` must not hold the split it is scored on. "
                        f"Received: fit_on={fit_on}, evaluate_on={evaluate_on!r}")
    counts = collections.defaultdict(collections.Counter)
    overall = collections.Counter()
    for name in fit_on:
        for tokens, tags in _checked_tagged_pairs(splits[name], name):
            for token, tag in zip(tokens, tags):
                counts[token][tag] += 1
                overall[tag] += 1
    if not overall:
        raise KseqError(f"The `fit_on` splits hold no tokens. Received: fit_on={fit_on}")
    default = _most_frequent(overall, overall)
    best = {token: _most_frequent(tag_counts, overall) for token, tag_counts in counts.items()}
    right = collections.Counter()  # "seen" / "unseen" -> correct tokens
    total = collections.Counter()
    for tokens, tags in _checked_tagged_pairs(splits[evaluate_on], evaluate_on):
        for token, tag in zip(tokens, tags):
            kind = "seen" if token in best else "unseen"
            total[kind] += 1
            right[kind] += best.get(token, default) == tag
    tokens = total["seen"] + total["unseen"]
    if not tokens:
        raise KseqError(f"The `evaluate_on` split holds no tokens. "
                        f"Received: evaluate_on={evaluate_on!r}")
    share = {kind: right[kind] / total[kind] if total[kind] else None for kind in total}
    return {"accuracy": (right["seen"] + right["unseen"]) / tokens,
            "seen_accuracy": share.get("seen"), "unseen_accuracy": share.get("unseen"),
            "unseen_share": total["unseen"] / tokens, "tokens": tokens,
            "unseen_tokens": total["unseen"], "default_tag": default}


def _most_frequent(tag_counts, overall):
    return min(tag_counts, key=lambda tag: (-tag_counts[tag], -overall[tag], tag))


def _checked_tagged_pairs(pairs, name):
    """`pairs` after checking each is `(tokens, tags)`: equal-length lists of str."""
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise KseqError(f"splits[{name!r}] must be a list of (tokens, tags) pairs. "
                        f"Received: {type(pairs).__name__}")
    checked = []
    for index, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                and all(isinstance(part, (list, tuple)) for part in pair)
                and len(pair[0]) == len(pair[1])
                and all(isinstance(item, str) for part in pair for item in part)):
            raise KseqError(f"splits[{name!r}][{index}] must be (tokens, tags): two "
                            f"equal-length lists of str. Received: {pair!r:.120}")
        checked.append(pair)
    return checked


def base_subsets(train, test):
    """`(seen, unseen)`: the `test` emoji whose base (`base_of`) some `train` emoji has,
    and the rest (the builder's `test_seen_base` / `test_unseen_base`, for any split)."""
    trained = {base_of(sequence) for sequence in train}
    seen = [sequence for sequence in test if base_of(sequence) in trained]
    unseen = [sequence for sequence in test if base_of(sequence) not in trained]
    return seen, unseen


def base_subset_rows(splits, split):
    """`{split, split_seen_base, split_unseen_base}` -> row indices of `splits[split]`
    (`(image, caption)` rows of `emoji_captions("en")`)."""
    sequence_of = {caption_of_name(names["en"]): sequence
                   for sequence, names in emoji_names().items() if "en" in names}
    emoji = [sequence_of[caption] for _, caption in splits[split]]
    seen, _ = base_subsets([sequence_of[caption] for _, caption in splits["train"]], emoji)
    seen = set(seen)  # sequences are unique, so membership gives the rows
    rows = range(len(emoji))
    return {split: list(rows),
            f"{split}_seen_base": [i for i in rows if emoji[i] in seen],
            f"{split}_unseen_base": [i for i in rows if emoji[i] not in seen]}


def monotone_alignment_mass(weights, width=1):
    """Share of attention within ±`width` source positions of the diagonal `s = t·S/T`."""
    steps, length = weights.shape
    centres = np.round(np.arange(steps) * (length - 1) / max(steps - 1, 1))
    near = np.abs(np.arange(length)[None, :] - centres[:, None]) <= width
    return float((weights * near).sum() / max(weights.sum(), 1e-9))
