"""The exported tagger: sentences or tokens in, tokens and tags of equal length out."""

import pytest

from tagger_fixtures import UNSEEN, overfit
from testing import run_export_test

pytestmark = pytest.mark.slow  # an overfit, an export and a child process: ~25 s


def test_both_signatures_return_what_tag_returns(shared_models, tmp_path):
    model = shared_models.get("tagger-rnn", lambda: overfit("rnn"))  # the tagger tests' model
    path = str(tmp_path / "tagger" / "1")
    model.export(path)
    sentences = [s for s, _ in UNSEEN[:5]] + ["", "  bo   kar "]
    words = [s.split() for s in sentences]
    width = max(len(w) for w in words)
    padded = [w + [""] * (width - len(w)) for w in words]
    answers = run_export_test(path, {"text": ("serving_default", {"text": sentences}),
                                     "tokens": ("serve_tokens", {"tokens": padded})})
    expected = model.tag(sentences)
    for name in ("text", "tokens"):
        served = answers[name]
        assert served["length"] == [len(tags) for _, tags in expected]
        for row, (words_out, tags) in enumerate(expected):
            n = served["length"][row]
            assert served["tokens"][row][:n] == words_out
            assert served["tags"][row][:n] == tags
            assert all(t == "" for t in served["tags"][row][n:])
