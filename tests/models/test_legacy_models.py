"""Models saved before the tasks redesign load with `keras.saving.load_model` and
behave exactly as they did: same teacher-forced logits, same translations."""

import hashlib
import json
import os

import keras
import numpy as np
import pytest

import kseq  # noqa: F401  (registers the kseq classes)

HERE = os.path.dirname(os.path.abspath(__file__))
LEGACY = os.path.join(HERE, "..", "fixtures", "legacy")
SHIPPED = os.path.join(HERE, "..", "..", "kseq", "presets", "numbers_fr_transformer.keras")
SHIPPED_SHA256 = "1623f174bf1c954eaa6568eb5e1d033e7966ff8f628fc0f6aae82a68de9cf3c6"


@pytest.mark.parametrize("arch", ["rnn", "attention", "conv"])
def test_legacy_fixture_loads_and_translates_identically(arch):
    with open(os.path.join(LEGACY, f"{arch}.json"), encoding="utf-8") as handle:
        expected = json.load(handle)
    model = keras.saving.load_model(os.path.join(LEGACY, f"{arch}.keras"))
    features = {k: np.array(expected[k], "int32") for k in ("source_ids", "decoder_ids")}
    np.testing.assert_allclose(model(features).numpy(), np.array(expected["logits"]),
                               atol=1e-5)
    assert model.translate(expected["sources"], beam_size=1) == expected["greedy"]
    assert model.translate(expected["sources"], beam_size=2) == expected["beam2"]
    assert expected["greedy"] == expected["references"]  # the fixture was trained to fit


def test_shipped_transformer_is_unchanged_and_still_translates():
    with open(SHIPPED, "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == SHIPPED_SHA256
    model = keras.saving.load_model(SHIPPED)
    assert model.translate(["forty-two", "one hundred and five"], beam_size=4) == [
        "quarante-deux", "cent cinq"]
