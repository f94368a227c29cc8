import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from fresh_process import ENV
from testing import check_export_holds_weights_only, check_served_ops, run_export_test
from translator_fixtures import PAIRS

LONG = " ".join(["seven"] * 60)


@pytest.fixture(scope="module")
def exported(overfit_translator, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("export") / "translator" / "1")
    overfit_translator.export(path, beam_size=4, n_best=2)
    return path




@pytest.fixture(scope="module")
def loaded(exported):
    """`exported` loaded in this process, once (seconds: its search functions are restored)."""
    return tf.saved_model.load(exported)


@pytest.mark.slow
def test_fresh_process_parity(overfit_translator, exported):
    # Defined results for bad input: empty, over-long, blank, a lone surrogate (sent as its
    # surrogatepass bytes: invalid UTF-8, as a client would), then invalid UTF-8 bytes.
    sources = [s for s, _ in PAIRS[:5]] + ["", LONG, "   ", "one \ud800 two"]
    batch = [t.encode("utf-8", "surrogatepass") for t in sources] + [b"one\xff two"]
    requests = {"batch": ("serving_default", {"text": batch})}
    requests.update({f"alone {i}": ("serving_default", {"text": [t]}) for i, t in enumerate(batch)})
    answers = run_export_test(exported, requests, loop=True)
    served = answers["batch"]
    expected, scores, truncated = zip(*overfit_translator.translate(
        sources + [b"one\xff two"], beam_size=4, n_best=2, return_scores=True,
        return_truncated=True))
    assert [row[0] for row in served["text"][:5]] == [t for _, t in PAIRS[:5]]
    assert served["text"] == [list(e) for e in expected]
    np.testing.assert_allclose(np.array(served["score"]), np.array(scores), atol=1e-4)
    assert served["truncated"] == list(truncated) == [False] * 6 + [True] + [False] * 3
    for blank in (5, 7):
        assert served["text"][blank] == ["", ""] and served["score"][blank] == [0.0, 0.0]
    alone = [answers[f"alone {i}"]["text"][0][0] for i in range(len(batch))]
    assert alone == [row[0] for row in served["text"]]


@pytest.mark.slow
def test_graph_has_no_xla_or_python_ops(exported):
    import tensorflow_text  # noqa: F401  (registers its ops)

    check_served_ops(exported, {"NormalizeUTF8", "RegexSplitWithOffsets"}, loop=True)


@pytest.mark.slow
def test_assets_metadata_and_cli_listing(exported):
    assert sorted(os.listdir(os.path.join(exported, "assets"))) == [
        "source_vocabulary.txt", "target_vocabulary.txt"]
    with open(os.path.join(exported, "assets.extra", "kseq_export.json")) as handle:
        metadata = json.load(handle)
    assert metadata["search"]["beam_size"] == 4 and metadata["xla"] is False
    assert metadata["tensorflow_version"] == tf.__version__
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    shown = subprocess.run([cli, "show", "--dir", exported, "--all"], env=ENV,
                           capture_output=True, text=True, timeout=300)
    assert "serving_default" in shown.stdout and "serve_ids" in shown.stdout


@pytest.mark.slow
def test_ids_signature_and_empty_batch(loaded, overfit_translator):
    served = loaded
    ids = overfit_translator.source_ids_for([PAIRS[0][0]])
    out = served.signatures["serve_ids"](source_ids=ids,
                                        lengths=tf.reduce_sum(tf.cast(ids > 0, tf.int32), 1))
    text = overfit_translator.target_tokenizer.detokenize(out["ids"][:, 0]).numpy()[0].decode()
    assert text == PAIRS[0][1]
    empty = served.signatures["serving_default"](text=tf.constant([], tf.string))
    assert empty["text"].shape[0] == 0


@pytest.mark.slow  # uses the module's trained model (or export), seconds to build
def test_warmup_file_holds_prediction_logs(exported):
    from tensorflow_serving.apis import prediction_log_pb2

    path = os.path.join(exported, "assets.extra", "tf_serving_warmup_requests")
    logs = [prediction_log_pb2.PredictionLog.FromString(r.numpy())
            for r in tf.data.TFRecordDataset(path)]
    assert len(logs) == 3
    request = logs[0].predict_log.request
    assert request.model_spec.signature_name == "serving_default"
    assert tf.make_ndarray(request.inputs["text"]).dtype == object


@pytest.fixture(scope="module")
def cli_exported(overfit_translator, exported, tmp_path_factory):
    """`kseq export` of the translator saved as `.keras`, next to a copy of `exported`.

    `(model folder, serving base)`: `<base>/numbers/1` is `exported` (copied: version 1 is
    taken), `<base>/numbers/2` the CLI's export, read back from the `.keras` file, with the
    same beam and n-best as `exported`. Picking version 1 in an empty folder and the
    versions after it are tested in test_export_safety.py (without a real export).
    """
    import shutil

    from kseq.cli import main

    root = tmp_path_factory.mktemp("cli_export")
    model_dir = root / "trained"
    model_dir.mkdir()
    overfit_translator.save(model_dir / "model.keras")
    base = root / "serving"
    shutil.copytree(exported, base / "numbers" / "1")
    assert main(["export", str(model_dir / "model.keras"), "--output", str(base / "numbers"),
                 "--beam", "4", "--n-best", "2"]) == 0  # a .keras file (issue 49 item 7)
    return model_dir, base


@pytest.mark.slow
def test_round_trip_keras_file_then_export_gives_same_outputs(loaded, cli_exported):
    again = str(cli_exported[1] / "numbers" / "2")  # exported after a .keras round trip
    batch = tf.constant([s for s, _ in PAIRS[:4]])
    first = loaded.signatures["serving_default"](text=batch)
    second = tf.saved_model.load(again).signatures["serving_default"](text=batch)
    np.testing.assert_array_equal(first["text"].numpy(), second["text"].numpy())
    np.testing.assert_allclose(first["score"].numpy(), second["score"].numpy(), atol=1e-5)


@pytest.mark.slow  # uses the module's exports: reads their checkpoints
def test_exports_hold_the_weights_and_no_optimizer_state(overfit_translator, exported,
                                                         cli_exported):
    """tests/export/test_export_variables.py's check on both exports of the trained
    translator (its optimizer state made): `model.export` and `kseq export` of its
    `model.keras`, which holds the optimizer state."""
    check_export_holds_weights_only(overfit_translator, exported)
    check_export_holds_weights_only(overfit_translator, str(cli_exported[1] / "numbers" / "2"))


@pytest.mark.slow  # uses the module's trained model (or export), seconds to build
def test_cli_export_writes_serving_layout(cli_exported):
    from kseq.cli import main

    model_dir, base = cli_exported
    assert sorted(os.listdir(base / "numbers")) == ["1", "2"]  # the next free version
    assert 'name: "numbers"' in (base / "models.config").read_text()
    assert main(["export", str(model_dir), "--output", str(base / "numbers"),
                 "--version", "1"]) == 2
