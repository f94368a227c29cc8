"""The fast WordPiece learner gives tensorflow-text's vocabulary for each threshold."""

import random

import pytest
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as reference

from kseq.text.token_marks import RESERVED_TOKENS
from kseq.text.wordpiece_learning import learn_wordpiece, learn_with_threshold


def _zipf_counts(words=1500, seed=3):
    """Made-up words with Zipf-like counts (ties included)."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnoprstuéè"
    made = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 11))) for _ in range(words)}
    return {word: max(1, 5000 // rank) for rank, word in enumerate(sorted(made), start=1)}


def _reference_vocabulary(counts, threshold):
    params = reference.Params(int(1e7), 10, 4, int(5e6), 50, 1000, 8000, 0.05, True, "##",
                              list(RESERVED_TOKENS))
    words = reference.get_input_words(list(counts.items()), params.reserved_tokens, 50)
    allowed = reference.get_allowed_chars(words, 1000)
    words = reference.filter_input_words(words, allowed, params.max_input_tokens)
    return reference.learn_with_thresh(words, threshold, params)


@pytest.mark.parametrize("threshold", [1, 3, 12, 200])
def test_each_threshold_gives_tensorflow_texts_vocabulary(threshold):
    counts = _zipf_counts()
    assert learn_with_threshold(counts, threshold, list(RESERVED_TOKENS)) == \
        _reference_vocabulary(counts, threshold)


def test_search_lands_within_five_percent_of_the_size():
    vocabulary = learn_wordpiece(_zipf_counts(), 600, list(RESERVED_TOKENS))
    assert 570 <= len(vocabulary) <= 600
    assert vocabulary[: len(RESERVED_TOKENS)] == list(RESERVED_TOKENS)
    assert len(set(vocabulary)) == len(vocabulary)


def test_max_words_learns_from_the_most_frequent_words_only():
    counts = {"alpha": 100, "beta": 90, "zzzqqq": 1}
    vocabulary = learn_wordpiece(counts, 100, ["<pad>"], max_words=2)
    assert "q" not in vocabulary and "alpha" in vocabulary
