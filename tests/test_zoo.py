import json
import os

import keras

import kseq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_preset_loads_and_names_known_parts():
    for name in kseq.zoo.presets():
        recipe = kseq.zoo.load_recipe(name)
        assert recipe["model"]["arch"] in kseq.zoo.ARCHITECTURES
        assert recipe["tokenizer"]["kind"] in kseq.text.TOKENIZERS


def test_merge_is_deep_and_right_most_wins():
    merged = kseq.zoo.merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}, {"d": 4})
    assert merged == {"a": {"b": 1, "c": 3}, "d": 4}


def test_shipped_weights_translate_unseen_numbers():
    model = keras.saving.load_model(os.path.join(ROOT, "zoo", "numbers_fr_transformer",
                                                 "model.keras"))
    test = kseq.data.numbers_dataset("fr", 30000, 500, 1000, seed=0)["test"][:50]
    outputs = model.translate([s for s, _ in test], beam_size=1)
    assert sum(o == t for o, (_, t) in zip(outputs, test)) >= 48
    assert model.translate(["seven hundred and seventy-seven"]) == ["sept cent soixante-dix-sept"]


def test_recipe_file_path_works(tmp_path):
    path = tmp_path / "mine.json"
    recipe = kseq.zoo.load_recipe("numbers_fr_tiny")
    path.write_text(json.dumps(recipe))
    assert kseq.zoo.load_recipe(str(path)) == recipe
