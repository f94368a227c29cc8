import json
import os

import keras

import kseq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_preset_loads_and_names_known_parts():
    for name in kseq.zoo.presets():
        recipe = kseq.zoo.load_recipe(name)
        assert recipe.get("task", "translator") in kseq.zoo.TASK_BUILDERS
        if recipe.get("task", "translator") == "captioner":
            assert recipe["model"]["encoder"] in kseq.zoo.ENCODERS
            assert recipe["model"]["decoder"] in kseq.zoo.DECODERS
        elif recipe["task"] == "classifier":
            assert recipe["model"]["encoder"] in kseq.zoo.CLASSIFIER_ENCODERS
        elif recipe["task"] == "tagger":
            assert recipe["model"]["encoder"] in kseq.zoo.TAGGER_ENCODERS
        else:
            assert recipe["model"]["arch"] in kseq.zoo.ARCHITECTURES
        if "tokenizer" in recipe or not kseq.zoo.takes_images(recipe):
            assert recipe["tokenizer"]["kind"] in kseq.text.TOKENIZERS
        assert recipe["data"]["builder"] in kseq.zoo.DATA_BUILDERS


def test_merge_is_deep_and_right_most_wins():
    merged = kseq.zoo.merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}, {"d": 4})
    assert merged == {"a": {"b": 1, "c": 3}, "d": 4}


def test_shipped_weights_translate_unseen_numbers():
    model = keras.saving.load_model(os.path.join(ROOT, "kseq", "presets",
                                                 "numbers_fr_transformer.keras"))
    test = kseq.data.numbers_dataset("fr", 30000, 500, 1000, seed=0)["test"][:50]
    outputs = model.translate([s for s, _ in test], beam_size=1)
    assert sum(o == t for o, (_, t) in zip(outputs, test)) >= 48
    assert model.translate(["seven hundred and seventy-seven"]) == ["sept cent soixante-dix-sept"]


def test_recipe_file_path_works(tmp_path):
    path = tmp_path / "mine.json"
    recipe = kseq.zoo.load_recipe("numbers_fr_tiny")
    path.write_text(json.dumps(recipe))
    assert kseq.zoo.load_recipe(str(path)) == recipe


def test_captioner_builder_errors_name_the_choice():
    import pytest

    with pytest.raises(kseq.errors.KseqError, match="decoder"):
        kseq.zoo.captioner("small_cnn", decoder="lstm", target_vocab=["a"])
    with pytest.raises(kseq.errors.KseqError, match="not a captioner"):
        kseq.zoo.captioner("numbers_fr_tiny", target_vocab=["a"])
    with pytest.raises(kseq.errors.KseqError, match="encoder"):
        kseq.models.build_captioner(kseq.text.WordTokenizer.build_vocabulary(["a"]),
                                    encoder="vgg")
