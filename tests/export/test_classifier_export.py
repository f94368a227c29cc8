"""The exported classifier: strings in, labels out, in a fresh process without kseq.

The classifier is the shared overfit Transformer one (tests/models/test_sequence_classifier.py
trains it once per run). A recurrent encoder's export is served by test_tagger_export.py, and
`kseq export` of a recurrent classifier is tests/test_cli_classifier.py's.
"""

import numpy as np
import pytest

import kseq
from classifier_fixtures import EXAMPLES, overfit
from testing import run_export_test

pytestmark = pytest.mark.slow  # an overfit (shared), an export and a child process: ~25 s


@pytest.fixture(scope="module")
def trained(shared_models):
    return shared_models.get("classifier-transformer-attention",  # the classifier tests' model
                             lambda: overfit("transformer", "attention"))


def test_served_labels_equal_predict_labels(trained, tmp_path):
    path = str(tmp_path / "classifier" / "1")
    trained.export(path)
    texts = [text for text, _ in EXAMPLES[:6]] + ["", "   ", "great " * 40, "awful \udcff"]
    sent = [t.encode("utf-8", "surrogatepass") for t in texts]
    answers = run_export_test(path, {"batch": ("serving_default", {"text": sent}),
                                     "empty": ("serving_default", {"text": []})})
    served = answers["batch"]
    expected = trained.predict_labels(texts[:6] + texts[6:8] + texts[8:9] + [sent[9]])
    assert served["label"] == [label for label, _ in expected]
    assert served["label"][:6] == [label for _, label in EXAMPLES[:6]]
    top = [max(row) for row in served["probabilities"]]
    np.testing.assert_allclose(top[:6], [p for _, p in expected[:6]], atol=1e-5)
    assert served["label_id"][6:8] == [-1, -1] and served["probabilities"][6] == [0.0] * 3
    assert served["truncated"] == [False] * 8 + [True, False]
    assert answers["empty"]["label"] == []


def test_search_options_are_refused_in_one_line(trained, tmp_path):
    with pytest.raises(kseq.errors.KseqError, match="beam_size"):
        trained.export(str(tmp_path / "x" / "1"), beam_size=4)
