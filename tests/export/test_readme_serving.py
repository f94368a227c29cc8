"""Keeps the manual's TF Serving request/response in sync with a real exported model.

The `docs/serving.md` block between the `serving-example` markers must equal what this
test renders from the overfit tiny translator's SavedModel. To refresh it:
`KSEQ_UPDATE_README=1 make test` (then review the diff).
"""

import json
import os
import re

import pytest
import tensorflow as tf

from translator_fixtures import PAIRS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "docs", "serving.md")  # the manual's serving page
MARKERS = ("<!-- serving-example:start -->", "<!-- serving-example:end -->")


def render(saved_model_dir):
    served = tf.saved_model.load(saved_model_dir)
    instances = [PAIRS[0][0], PAIRS[1][0], ""]
    out = served.signatures["serving_default"](text=tf.constant(instances))
    predictions = [
        {"text": [s.decode("utf-8") for s in out["text"].numpy()[i]],
         "length": out["length"].numpy()[i].tolist(),
         "truncated": bool(out["truncated"].numpy()[i])}
        for i in range(len(instances))
    ]
    request = json.dumps({"signature_name": "serving_default", "instances": instances},
                         ensure_ascii=False)
    response = json.dumps({"predictions": predictions}, ensure_ascii=False, indent=2)
    return (
        "```bash\n"
        "curl -s -X POST http://localhost:8501/v1/models/translator:predict \\\n"
        f"  -d '{request}'\n"
        "```\n\n"
        "Response (`score` omitted here; it is the float32 beam score per hypothesis):\n\n"
        f"```json\n{response}\n```"
    )


@pytest.mark.slow
def test_readme_serving_example_matches_real_model(overfit_translator, tmp_path):
    path = str(tmp_path / "translator" / "1")
    overfit_translator.export(path, beam_size=4, n_best=1)
    block = render(path)
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    pattern = re.escape(MARKERS[0]) + r"\n(.*?)\n" + re.escape(MARKERS[1])
    found = re.search(pattern, text, flags=re.S)
    assert found, "docs/serving.md lacks the serving-example markers"
    if os.environ.get("KSEQ_UPDATE_README") == "1":
        text = text[: found.start(1)] + block + text[found.end(1):]
        with open(README, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    assert found.group(1) == block
