"""The exported captioners: image bytes in, captions out, bad rows flagged, in a fresh process.

One export serves most tests here: `kseq export` of a run folder holding the shared overfit
captioner as `model.keras` (optimizer state and all), as `kseq train` leaves it, so it also
checks the command on a captioner and that the export holds no optimizer state. The shared
bilingual captioner's export (a language per image) is served by the same child process,
which then also decodes the hostile images (issue 50) through the first export's
`serving_default`: one TensorFlow start for all three.
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from captioner_fixtures import (EXAMPLES, bilingual_captioner, captions, decoded,  # noqa: F401
                                french, images, overfit_captioner, rgba_png)
from testing import check_export_holds_weights_only

pytestmark = pytest.mark.slow  # two exports (of the shared captioners) and one child process


@pytest.fixture(scope="module")
def exported(overfit_captioner, tmp_path_factory):
    from kseq.cli import main

    root = tmp_path_factory.mktemp("export")
    (root / "run").mkdir()
    overfit_captioner.save(str(root / "run" / "model.keras"))
    assert main(["export", str(root / "run"), "--output", str(root / "serving" / "captioner"),
                 "--beam", "4", "--n-best", "2", "--quiet"]) == 0
    path = str(root / "serving" / "captioner" / "1")
    assert os.path.isfile(os.path.join(path, "saved_model.pb"))
    return path


def test_the_export_holds_the_weights_and_no_optimizer_state(overfit_captioner, exported):
    """tests/export/test_export_variables.py's check, on this export (its model.keras held
    the captioner's optimizer state)."""
    check_export_holds_weights_only(overfit_captioner, exported)


def _jpeg(model, png):
    return tf.io.encode_jpeg(decoded(model, [png])[0], quality=100).numpy()


@pytest.fixture(scope="module")
def bilingual_exported(bilingual_captioner, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bilingual") / "captioner" / "1")
    bilingual_captioner.export(path, beam_size=2)
    return path


def _bilingual_requests():
    """Per-image languages (one untrained, "de"), junk bytes, the plain signature, an empty
    batch, and one language for two images (which must fail)."""
    pngs = images()[:3]
    return {"mixed": ("caption_in_language", {"image_bytes": pngs + [b"junk"],
                                              "language": ["fr", "en", "de", "fr"]}),
            "plain": ("serving_default", {"image_bytes": pngs[:1]}),
            "empty": ("caption_in_language", {"image_bytes": [], "language": []}),
            "one_language_for_two": ("caption_in_language", {"image_bytes": pngs[:2],
                                                             "language": ["fr"]})}


def _hostile_rows():
    from hostile_images import animated_webp, cross_gif, jpeg_bomb, long_gif, still_webp

    return {"animated_webp": animated_webp(), "cross_gif": cross_gif(),
            "jpeg_bomb": jpeg_bomb(), "long_gif": long_gif(), "still_webp": still_webp()}


@pytest.fixture(scope="module")
def served_both(overfit_captioner, exported, bilingual_exported, tmp_path_factory):
    """Both exports' answers and the hostile rows', from one child process (one TensorFlow
    start, not two): `(good images, answers, bilingual's, hostile)`, where `hostile()` is
    `hostile_images.run_rows_in_child`'s answer for the captioner export."""
    from hostile_images import run_exports_and_rows_in_child

    pngs = images()[:3]
    composited = tf.io.encode_png(decoded(overfit_captioner, [rgba_png()])[0]).numpy()
    good = [pngs[0], _jpeg(overfit_captioner, pngs[1]), pngs[2], rgba_png(), composited]
    jpeg = _jpeg(overfit_captioner, pngs[1])
    mixed = [pngs[0], b"junk bytes", b"", pngs[1][:-20], jpeg[:-2], jpeg, pngs[2]]
    requests = {"good": ("serving_default", {"image_bytes": good}),
                "mixed": ("serving_default", {"image_bytes": mixed}),
                "alone": ("serving_default", {"image_bytes": [pngs[0]]}),
                "empty": ("serving_default", {"image_bytes": []}),
                "rest": ("serving_default", {"image_bytes": REST_EXAMPLE})}
    answers, hostile = run_exports_and_rows_in_child(
        {"captioner": (exported, requests),
         "bilingual": (bilingual_exported, _bilingual_requests())},
        tmp_path_factory.mktemp("hostile"), _hostile_rows(), exported,
        loop=True, failing=["one_language_for_two"])  # one child
    return good, answers["captioner"], answers["bilingual"], hostile


@pytest.fixture(scope="module")
def served(served_both):
    return served_both[:2]


def test_the_bilingual_export_takes_a_language_per_image(served_both):
    answers = served_both[2]
    mixed = answers["mixed"]
    assert [row[0] for row in mixed["text"]] == [french(EXAMPLES[0][1]), EXAMPLES[1][1], "", ""]
    assert mixed["valid"] == [True, True, False, False]  # "de" untrained; junk bytes
    assert [row[0] for row in mixed["score"]][2:] == [0, 0] and mixed["length"][2][0] == 0
    assert mixed["score"][0][0] < 0 and mixed["length"][0][0] > 0
    assert answers["plain"]["valid"] == [True]
    assert answers["empty"]["text"] == []
    error = answers["one_language_for_two"]["error"]
    assert error.startswith("InvalidArgumentError") and "one language per image" in error


def test_served_captions_and_scores_equal_caption(overfit_captioner, served):
    good, answers = served
    expected = overfit_captioner.caption(good, beam_size=4, n_best=2, return_scores=True)
    assert answers["good"]["text"] == [texts for texts, _ in expected]
    np.testing.assert_allclose(answers["good"]["score"], [s for _, s in expected], atol=1e-4)
    assert [row[0] for row in answers["good"]["text"][:3]] == captions()[:3]
    assert answers["good"]["valid"] == [True] * 5
    # A transparent PNG and the same image composited on white: the served tensor is the same.
    assert answers["good"]["text"][3] == answers["good"]["text"][4]
    np.testing.assert_allclose(answers["good"]["score"][3], answers["good"]["score"][4],
                               atol=1e-5)
    assert answers["alone"]["text"][0] == answers["good"]["text"][0]


def test_bad_rows_are_flagged_and_never_fail_the_batch(served):
    _, answers = served
    mixed = answers["mixed"]
    assert mixed["valid"] == [True, False, False, False, False, True, True]
    assert [row[0] for row in mixed["text"]] == [captions()[0], "", "", "", "", captions()[1],
                                                  captions()[2]]
    for bad in (1, 2, 3, 4):
        assert mixed["score"][bad] == [0.0, 0.0] and mixed["length"][bad] == [0, 0]
    assert answers["empty"]["text"] == []


def test_metadata_assets_and_warmup(exported):
    from tensorflow_serving.apis import prediction_log_pb2

    with open(os.path.join(exported, "assets.extra", "kseq_export.json")) as handle:
        metadata = json.load(handle)
    assert metadata["model_class"] == "Captioner" and metadata["image_size"] == [32, 32]
    assert metadata["search"]["n_best"] == 2 and metadata["xla"] is False
    assert os.listdir(os.path.join(exported, "assets")) == ["target_vocabulary.txt"]
    path = os.path.join(exported, "assets.extra", "tf_serving_warmup_requests")
    logs = [prediction_log_pb2.PredictionLog.FromString(r.numpy())
            for r in tf.data.TFRecordDataset(path)]
    request = logs[0].predict_log.request
    assert len(logs) == 2 and tf.make_ndarray(request.inputs["image_bytes"])[0][:4] == b"\x89PNG"


README = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "docs", "serving.md")  # the manual's serving page
MARKERS = ("<!-- captioner-serving-example:start -->", "<!-- captioner-serving-example:end -->")
REST_EXAMPLE = [images()[0], b"not an image"]  # the request the manual shows


def render_rest_example(out):
    """TF Serving's REST request for one PNG (base64) and the response this export gives.

    `out`: the export's answer to `REST_EXAMPLE` (`run_export_test`: lists, text decoded).
    """
    import base64

    predictions = [{"text": out["text"][row], "length": out["length"][row],
                    "valid": bool(out["valid"][row])} for row in range(2)]
    instances = [{"b64": base64.b64encode(image).decode("ascii")} for image in REST_EXAMPLE]
    request = json.dumps({"signature_name": "serving_default", "instances": instances})
    response = json.dumps({"predictions": predictions}, indent=2)
    return ("```bash\n"
            "curl -s -X POST http://localhost:8501/v1/models/captioner:predict \\\n"
            f"  -d '{request}'\n"
            "```\n\n"
            "Response (`score` omitted here: the float32 beam score of each caption):\n\n"
            f"```json\n{response}\n```")


def test_readme_rest_example_comes_from_this_export(served):
    import re

    block = render_rest_example(served[1]["rest"])
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    found = re.search(re.escape(MARKERS[0]) + r"\n(.*?)\n" + re.escape(MARKERS[1]), text, re.S)
    assert found, "docs/serving.md lacks the captioner-serving-example markers"
    if os.environ.get("KSEQ_UPDATE_README") == "1":
        with open(README, "w", encoding="utf-8") as handle:
            handle.write(text[: found.start(1)] + block + text[found.end(1):])
        return
    assert found.group(1) == block


def test_hostile_images_are_bad_rows_of_the_served_model(served_both):
    """Issue 50: each hostile row beside a good PNG, through `serving_default` in a fresh
    process without kseq (the served tests' child, after their requests). An animated WebP
    once aborted the process (under TF Serving, the server, and the good row's caption with
    it); the GIF and JPEG bombs cost 2.3 and 1.3 GB, the 40 MB GIF +1 GB and 30-50 s
    (tests/data/test_hostile_images.py)."""
    answers = served_both[3]()  # fails here, not in the served tests, if a row crashed it
    assert answers.pop("kseq_loaded") is False
    assert answers.pop("still_webp")["valid"] == [True, True]
    for name, answer in answers.items():
        assert answer["valid"] == [False, True], (name, answer)
        assert answer["extra_mb"] < 300 and answer["seconds"] < 5, (name, answer)
