"""CIDEr-D against values worked out by hand (L = log 2 throughout: every corpus has 2 items)."""

import math

import pytest

from kseq.errors import KseqError
from kseq.metrics import cider
from kseq.metrics.cider import cider_tokens

L = math.log(2)


def test_identical_short_captions_score_five():
    # refs "a cat", "a dog": df(a) = 2 -> weight log(2/2) = 0; cat, dog, "a cat", "a dog":
    # df 1 -> weight L. Hypothesis = reference, so per order the cosine is 1 where the
    # vector is non-zero: unigrams {a: 0, cat: L} -> L·L / (L·L) = 1; bigrams {a cat: L} -> 1;
    # no 3- or 4-grams -> 0. Same length: penalty 1. 10 · (1 + 1 + 0 + 0) / 4 = 5.
    score, items = cider(["a cat", "a dog"], ["a cat", "a dog"])
    assert items == pytest.approx([5.0, 5.0]) and score == pytest.approx(5.0)


def test_clipping_and_an_empty_hypothesis():
    # refs "a red cat", "a blue dog". df(a) = 2 -> 0; every other reference n-gram df 1 -> L;
    # "red red" is in no reference: df 0 -> max(1, 0) = 1 -> weight L as well.
    # Item 1, hypothesis "red red cat" vs "a red cat" (3 tokens each: penalty 1):
    #   unigrams: hyp {red: 2L, cat: L}, |hyp| = √5·L;
    #             ref {a: 0, red: L, cat: L}, |ref| = √2·L
    #     clipped: (min(2L, L)·L + L·L) / (√5·√2·L²) = 2/√10 = 0.632456
    #     plain cosine: (2L·L + L·L) / (√10·L²) = 3/√10 = 0.948683
    #   bigrams: hyp {red red: L, red cat: L}, ref {a red: L, red cat: L}:
    #            L² / (√2L·√2L) = 1/2
    #   trigrams: "red red cat" vs "a red cat": 0; no 4-grams: 0.
    #   CIDEr-D = 10 · (2/√10 + 1/2) / 4 = 2.831139
    #   plain CIDEr (no clipping, no penalty) = 10 · (3/√10 + 1/2) / 4 = 3.621708
    # Item 2, the empty hypothesis: no n-grams -> 0. Corpus: the mean of the two items.
    hypotheses, references = ["red red cat", ""], ["a red cat", "a blue dog"]
    cider_d = 10 * (2 / math.sqrt(10) + 0.5) / 4
    score, items = cider(hypotheses, references)
    assert items == pytest.approx([cider_d, 0.0]) and cider_d == pytest.approx(2.831139)
    assert score == pytest.approx(cider_d / 2)
    plain = 10 * (3 / math.sqrt(10) + 0.5) / 4
    score, items = cider(hypotheses, references, sigma=None, clipped=False)
    assert items == pytest.approx([plain, 0.0]) and plain == pytest.approx(3.621708)


def test_two_references_and_the_length_penalty():
    # Item 1: refs "a red cat", "the red cat sits"; item 2: ref "a dog". df(a) = 2 -> 0,
    # every other n-gram df 1 -> weight L. Item 1's hypothesis "red cat" (2 tokens):
    #   unigrams {red: L, cat: L} (|.| = √2·L), bigrams {red cat: L} (|.| = L), nothing longer.
    #   vs "a red cat" (3 tokens; penalty e^(-1/72)):
    #     unigrams 2L² / (√2L·√2L) = 1; bigrams L² / (L·√2L) = 1/√2
    #   vs "the red cat sits" (4 tokens; penalty e^(-4/72)):
    #     unigrams {the, red, cat, sits} |.| = 2L: 2L² / (√2L·2L) = 1/√2
    #     bigrams {the red, red cat, cat sits} |.| = √3·L: L² / (L·√3L) = 1/√3
    #   item 1 = 10 · [e^(-1/72)·(1 + 1/√2) + e^(-4/72)·(1/√2 + 1/√3)]
    #            / (4 orders · 2 references)
    #          = 10 · (1.683561 + 1.215043) / 8 = 3.623256
    # Item 2: "a dog" = its reference: 10 · (1 + 1) / 4 = 5. Corpus (3.623256 + 5) / 2.
    item_1 = 10 * (math.exp(-1 / 72) * (1 + 1 / math.sqrt(2))
                   + math.exp(-4 / 72) * (1 / math.sqrt(2) + 1 / math.sqrt(3))) / 8
    score, items = cider(["red cat", "a dog"], [["a red cat", "the red cat sits"], "a dog"])
    assert items == pytest.approx([item_1, 5.0]) and item_1 == pytest.approx(3.623256)
    assert score == pytest.approx((item_1 + 5.0) / 2) and score == pytest.approx(4.311628)
    # Without the penalty: 10 · (1 + 1/√2 + 1/√2 + 1/√3) / 8.
    _, items = cider(["red cat", "a dog"], [["a red cat", "the red cat sits"], ["a dog"]],
                     sigma=None)
    assert items[0] == pytest.approx(10 * (1 + 2 / math.sqrt(2) + 1 / math.sqrt(3)) / 8)


def test_identical_strings_score_highest():
    references = ["a man riding a red bike down the road", "two dogs play in the snow",
                  "a bowl of soup", "a red car parked by a tree"]
    best, _ = cider(references, references)
    # Each caption has weighted n-grams of every order 1-4: cosine 1 each, 10 · 4 / 4 = 10.
    assert best == pytest.approx(10.0)
    variants = [
        ["a man riding a bike down the road", *references[1:]],  # a word dropped
        ["a man riding a red bike down the road road", *references[1:]],  # one repeated
        ["the road down a red bike riding a man", *references[1:]],  # shuffled
        [references[1], references[0], *references[2:]],  # two swapped
    ]
    for hypotheses in variants:
        score, items = cider(hypotheses, references)
        assert score < best
        assert all(item <= full + 1e-12 for item, full in zip(items, cider(references,
                                                                             references)[1]))


def test_one_item_corpus_and_shared_words_weigh_nothing():
    # |I| = 1: every weight is log(1/1) = 0, so even an identical caption scores 0.
    assert cider(["a cat"], ["a cat"]) == (0.0, [0.0])
    # "a" is in every item's references: a hypothesis of only "a" scores 0.
    assert cider(["a", "a"], ["a cat", "a dog"]).score == 0.0


def test_tokens_are_lower_case_with_punctuation_split_off():
    assert cider_tokens("Flag: United  States!") == ["flag", ":", "united", "states", "!"]
    assert cider_tokens("keycap #") == ["keycap", "#"]
    assert cider_tokens("medium-dark skin tone") == ["medium", "-", "dark", "skin", "tone"]
    same = cider(["Red, cat", "A DOG"], ["red , cat", "a dog"])
    assert same == cider(["red , cat", "a dog"], ["red , cat", "a dog"])


@pytest.mark.parametrize("call, name", [
    (lambda: cider("a cat", ["a cat"]), "hypotheses"),
    (lambda: cider([b"a cat"], ["a cat"]), "hypotheses"),
    (lambda: cider(["a cat"], "a cat"), "references"),
    (lambda: cider(["a", "b"], ["a"]), "references"),
    (lambda: cider([], []), "hypotheses"),
    (lambda: cider(["a"], [[]]), "references"),
    (lambda: cider(["a"], [["a", 3]]), "references"),
    (lambda: cider(["a"], ["a"], max_n=0), "max_n"),
    (lambda: cider(["a"], ["a"], sigma=0), "sigma"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(KseqError, match=f"`{name}`.*Received"):
        call()
