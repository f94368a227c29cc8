"""Models saved before the tasks redesign load with `keras.saving.load_model` and
behave exactly as they did: same teacher-forced logits, same translations.

The searches run untraced (`functions_run_eagerly`): what is legacy here is the
loading, and a tiny model's search runs eagerly in a third of a trace's time; the
search's graph is traced by the translator tests and the exports."""

import hashlib
import json
import os
import zipfile

import keras
import numpy as np
import pytest

import kseq  # noqa: F401  (registers the kseq classes)
from testing import functions_run_eagerly

HERE = os.path.dirname(os.path.abspath(__file__))
LEGACY = os.path.join(HERE, "..", "fixtures", "legacy")
PRESETS = os.path.join(HERE, "..", "..", "kseq", "presets")
# The shipped numbers_fr_transformer.keras as kseq 0.1 wrote it (flat hyper-parameters, Adam
# moments included), kept as the Transformer fixture when the preset was re-saved in parts.
LEGACY_TRANSFORMER_SHA256 = "1623f174bf1c954eaa6568eb5e1d033e7966ff8f628fc0f6aae82a68de9cf3c6"


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["rnn", "attention", "conv"])
def test_legacy_fixture_loads_and_translates_identically(arch):
    with open(os.path.join(LEGACY, f"{arch}.json"), encoding="utf-8") as handle:
        expected = json.load(handle)
    model = keras.saving.load_model(os.path.join(LEGACY, f"{arch}.keras"))
    features = {k: np.array(expected[k], "int32") for k in ("source_ids", "decoder_ids")}
    np.testing.assert_allclose(model(features).numpy(), np.array(expected["logits"]),
                               atol=1e-5)
    with functions_run_eagerly():
        assert model.translate(expected["sources"], beam_size=1) == expected["greedy"]
        assert model.translate(expected["sources"], beam_size=2) == expected["beam2"]
    assert expected["greedy"] == expected["references"]  # the fixture was trained to fit


@pytest.mark.slow
def test_legacy_transformer_loads_as_parts_and_matches_the_reshipped_preset():
    path = os.path.join(LEGACY, "transformer.keras")
    with open(path, "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == LEGACY_TRANSFORMER_SHA256
    with zipfile.ZipFile(path) as archive:
        assert "encoder" not in json.loads(archive.read("config.json"))["config"]
    legacy = keras.saving.load_model(path)
    assert legacy.legacy_layout and type(legacy.encoder).__name__ == "TransformerEncoder"
    shipped = keras.saving.load_model(os.path.join(PRESETS, "numbers_fr_transformer.keras"))
    assert not shipped.legacy_layout
    assert {v.path: v.shape for v in legacy.weights} == {v.path: v.shape for v in shipped.weights}
    for variable in shipped.weights:  # the same weights, re-saved in the parts format
        np.testing.assert_array_equal(
            variable.numpy(), next(v for v in legacy.weights if v.path == variable.path).numpy())
    sources = ["forty-two", "one hundred and five", "nine thousand, eight hundred and ninety-eight"]
    expected = ["quarante-deux", "cent cinq", "neuf mille huit cent quatre-vingt-dix-huit"]
    with functions_run_eagerly():
        assert legacy.translate(sources, beam_size=4) == shipped.translate(sources, beam_size=4) \
            == expected


def test_no_shipped_preset_needs_the_legacy_reader():
    shipped = [name for name in os.listdir(PRESETS) if name.endswith(".keras")]
    assert "numbers_fr_transformer.keras" in shipped
    for name in shipped:
        with zipfile.ZipFile(os.path.join(PRESETS, name)) as archive:
            config = json.loads(archive.read("config.json"))
        if config["class_name"] == "LanguageModel":  # a decoder alone, a part from its start
            assert "decoder" in config["config"], name
            continue
        assert "encoder" in config["config"], name
