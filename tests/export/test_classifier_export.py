"""The exported classifiers and tagger: strings, tokens or image bytes in, labels or tags out,
in a fresh process without kseq.

The text classifier is the shared overfit Transformer one (tests/models/
test_sequence_classifier.py trains it once per run), the tagger the shared overfit RNN one
(tests/models/test_sequence_tagger.py's), the image classifier the shared one of tests/models/
test_image_classifier.py. A recurrent encoder's export is the tagger's, and `kseq export` of a
recurrent classifier is tests/test_cli_classifier.py's. The three exports are served by ONE
child process (`run_export_tests`): a child costs a TensorFlow start (~6.5 s).
"""

import os

import numpy as np
import pytest

import kseq
from classifier_fixtures import EXAMPLES, overfit
from image_classifier_fixtures import EXAMPLES as IMAGES, overfit as overfit_images
from tagger_fixtures import UNSEEN, overfit as overfit_tagger
from testing import run_export_tests

pytestmark = pytest.mark.slow  # three overfits (shared), three exports and one child: ~35 s

TEXTS = [text for text, _ in EXAMPLES[:6]] + ["", "   ", "great " * 40, "awful \udcff"]
SENT = [t.encode("utf-8", "surrogatepass") for t in TEXTS]
SENTENCES = [s for s, _ in UNSEEN[:5]] + ["", "  bo   kar "]
GOOD_IMAGES = [image for image, _ in IMAGES[:3]]


def padded_tokens(sentences):
    """The sentences' words, each row padded with "" to the longest (the tokens signature)."""
    words = [s.split() for s in sentences]
    width = max(len(w) for w in words)
    return [w + [""] * (width - len(w)) for w in words]


@pytest.fixture(scope="module")
def trained(shared_models):
    return shared_models.get("classifier-transformer-attention",  # the classifier tests' model
                             lambda: overfit("transformer", "attention"))


@pytest.fixture(scope="module")
def tagger(shared_models):
    return shared_models.get("tagger-rnn", lambda: overfit_tagger("rnn"))  # the tagger tests'


@pytest.fixture(scope="module")
def images(shared_models):
    return shared_models.get("image-classifier-attention",  # the image classifier tests'
                             lambda: overfit_images("attention"))


@pytest.fixture(scope="module")
def exported(trained, tagger, images, tmp_path_factory):
    """`{name: export folder}` of the three models."""
    folder = tmp_path_factory.mktemp("exports")
    paths = {name: str(folder / name / "1") for name in ("classifier", "tagger", "images")}
    for name, model in (("classifier", trained), ("tagger", tagger), ("images", images)):
        model.export(paths[name])
    return paths


@pytest.fixture(scope="module")
def served(exported):
    """Every request of the three export tests, answered by one child."""
    image_bytes = [GOOD_IMAGES[0], b"junk", GOOD_IMAGES[1], GOOD_IMAGES[2]]
    return run_export_tests({
        "images": (exported["images"], {
            "mixed": ("serving_default", {"image_bytes": image_bytes}),
            "empty": ("serving_default", {"image_bytes": []})}),
        "classifier": (exported["classifier"], {
            "batch": ("serving_default", {"text": SENT}),
            "empty": ("serving_default", {"text": []})}),
        "tagger": (exported["tagger"], {
            "text": ("serving_default", {"text": SENTENCES}),
            "tokens": ("serve_tokens", {"tokens": padded_tokens(SENTENCES)})})})


def test_served_labels_equal_predict_labels(trained, served):
    answers = served["classifier"]
    batch = answers["batch"]
    expected = trained.predict_labels(TEXTS[:6] + TEXTS[6:8] + TEXTS[8:9] + [SENT[9]])
    assert batch["label"] == [label for label, _ in expected]
    assert batch["label"][:6] == [label for _, label in EXAMPLES[:6]]
    top = [max(row) for row in batch["probabilities"]]
    np.testing.assert_allclose(top[:6], [p for _, p in expected[:6]], atol=1e-5)
    assert batch["label_id"][6:8] == [-1, -1] and batch["probabilities"][6] == [0.0] * 3
    assert batch["truncated"] == [False] * 8 + [True, False]
    assert answers["empty"]["label"] == []


def test_search_options_are_refused_in_one_line(trained, tmp_path):
    with pytest.raises(kseq.errors.KseqError, match="beam_size"):
        trained.export(str(tmp_path / "x" / "1"), beam_size=4)


def test_both_tagger_signatures_return_what_tag_returns(tagger, served):
    """(Was tests/export/test_tagger_export.py's test_both_signatures_return_what_tag_returns.)"""
    expected = tagger.tag(SENTENCES)
    for name in ("text", "tokens"):
        answer = served["tagger"][name]
        assert answer["length"] == [len(tags) for _, tags in expected]
        for row, (words_out, tags) in enumerate(expected):
            n = answer["length"][row]
            assert answer["tokens"][row][:n] == words_out
            assert answer["tags"][row][:n] == tags
            assert all(t == "" for t in answer["tags"][row][n:])


def test_the_image_export_serves_image_bytes_and_flags_bad_rows(images, exported, served):
    """(Was tests/models/test_image_classifier.py's test_the_export_serves_image_bytes_and_
    flags_bad_rows.)"""
    answers = served["images"]
    mixed = answers["mixed"]
    assert mixed["label"] == ["bar", "", "dot", "frame"]
    assert mixed["label_id"] == [0, -1, 1, 2] and mixed["valid"] == [True, False, True, True]
    assert mixed["probabilities"][1] == [0.0, 0.0, 0.0]
    expected = images.probabilities(GOOD_IMAGES)[0]
    np.testing.assert_allclose([mixed["probabilities"][i] for i in (0, 2, 3)], expected,
                               atol=1e-5)
    assert answers["empty"]["label"] == []
    assert os.path.isfile(os.path.join(exported["images"], "assets", "labels.txt"))
