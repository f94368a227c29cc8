"""The sequence tagger: overfits, tags unseen words from their spelling, one tag per word."""

import numpy as np
import pytest

import kseq
from tagger_fixtures import EXAMPLES, UNSEEN, build, overfit, tags_of
from testing import run_task_test

pytestmark = pytest.mark.slow  # one overfit per encoder: ~15 s each


@pytest.fixture(scope="module")
def trained(shared_models):
    return shared_models.get("tagger-rnn", lambda: overfit("rnn"))


def test_rnn_tagger_passes_the_task_test(trained):
    run_task_test(trained, lambda: build("rnn"), EXAMPLES, tags_of, boundaries=(48,))


def test_transformer_tagger_overfits():
    model = overfit("transformer", steps=140)
    assert tags_of(model, [s for s, _ in EXAMPLES]) == [t for _, t in EXAMPLES]


def test_unseen_words_get_tags_from_their_spelling(trained):
    scores = trained.evaluate_tags(UNSEEN)
    assert scores["token_accuracy"] >= 0.9, scores
    seen = {w for s, _ in EXAMPLES for w in s.split()}
    assert sum(w not in seen for s, _ in UNSEEN for w in s.split()) > 50


def test_one_tag_per_word_for_every_sentence(trained):
    sentences = [s for s, _ in UNSEEN] + ["", "   ", "solo", "a  b\\tc"]
    for words, tags in trained.tag(sentences):
        assert len(words) == len(tags)
    assert trained.tag(["", "bo  kar"])[0] == ([], [])
    assert trained.tag([["bo", "kar"]])[0][0] == ["bo", "kar"]  # pre-tokenised input
    long = " ".join(["bo"] * 40)  # 119 characters: words past max_length=48 get no tag
    words, tags = trained.tag([long])[0]
    assert len(words) == len(tags) == 16


def test_bad_pairs_name_the_sentence(trained):
    pre = trained.preprocessor
    with pytest.raises(kseq.errors.KseqError, match="Sentence 2 has 2 words but 1 tags"):
        pre.to_dataset([("bo kar", "NOUN VERB"), ("bo kar", "NOUN")])
    with pytest.raises(kseq.errors.KseqError, match="Sentence 1: tags must be among"):
        pre.to_dataset([("bo", "X")])
    with pytest.raises(kseq.errors.KseqError, match="list"):
        trained.tag(42)
    assert trained.tag("bo kar") == trained.tag(["bo kar"])[0]  # one sentence, one answer
