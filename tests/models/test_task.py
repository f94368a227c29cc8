"""`Task` is general: a toy classifier (tests/models/toy_classifier.py) passes the task test —
trains, saves, serves; its real-rows step on `[B, E]` states equals Keras's — and trains from
a recipe file with `kseq train`, without overriding the base."""

import json
import os
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.cli import main as kseq_command
from kseq.data import numbers_dataset
from kseq.training import load_trained
from testing import build_optimizer, load_presets_once, run_export_test, run_task_test
from toy_classifier import ToyClassifier, ToyPreprocessor

NUMBERS = numbers_dataset("fr", train_size=60, valid_size=0, test_size=0, seed=3)["train"]
# "big" numbers are those read with "thousand": one word decides the class.
PAIRS = [(text, "big" if "thousand" in text else "small") for text, _ in NUMBERS]


@kseq.zoo.register_task("toy_classifier")
def build_toy_classifier(recipe, train_pairs):
    tokenizer = kseq.text.WordTokenizer.build_vocabulary([t for t, _ in train_pairs])
    encoder = kseq.models.encoders.TransformerEncoder(
        tokenizer.vocabulary_size, num_layers=1, num_heads=2, intermediate_dim=32, dropout=0.0,
        max_length=16, hidden_dim=recipe["model"].get("hidden_dim", 16))
    model = ToyClassifier(encoder, ToyPreprocessor(tokenizer, ["small", "big"]))
    return model.compile_from_recipe(recipe["training"])


RECIPE = {"task": "toy_classifier", "model": {"hidden_dim": 16},
          "training": {"epochs": 12, "batch_size": 16, "boundaries": [8, 16], "warmup_steps": 5,
                       "peak_learning_rate": 0.01, "label_smoothing": 0.0, "seed": 0}}


def toy_classifier(seed=0):
    keras.utils.set_random_seed(seed)
    return kseq.zoo.build(RECIPE, PAIRS)


def served_labels(model, texts):
    return [s.decode() for s in tf.function(model.serve)(tf.constant(texts))["label"].numpy()]


@pytest.fixture(scope="module")
def trained_toy():
    """The toy classifier overfit on PAIRS, trained once for this module (tests read it only)."""
    model = toy_classifier()
    data = model.preprocessor.training_dataset(PAIRS, [8, 16], batch_size=16, shuffle=False)
    build_optimizer(model).fit(data.cache().repeat(20), epochs=1, verbose=0)
    return model


@pytest.mark.slow  # the toy's training (shared) and the task test's fits: ~25 s
def test_toy_classifier_passes_the_task_test(trained_toy):
    assert {label for _, label in PAIRS} == {"small", "big"}
    model = trained_toy
    run_task_test(model, lambda: kseq.zoo.build(RECIPE, PAIRS), PAIRS, served_labels,
                  boundaries=(8, 16))
    # Its layers and preprocessor are serialized nested by Task.get_config.
    config = model.get_config()
    assert config["encoder"]["class_name"] == "TransformerEncoder"
    assert config["preprocessor"]["config"]["labels"] == ["small", "big"]


@pytest.mark.slow  # an export and a child process: ~20 s (the training is shared)
def test_the_toy_classifier_exports_through_the_one_export_path(trained_toy, tmp_path):
    model = trained_toy
    export = str(tmp_path / "toy" / "1")
    model.export(export)  # Task.export: kseq.export.export_saved_model on its ServingSpec
    texts = [t for t, _ in PAIRS[:8]]
    served = run_export_test(export, {"texts": ("serving_default", {"text": texts})})
    assert served["texts"]["label"] == served_labels(model, texts)
    with open(os.path.join(export, "assets.extra", "kseq_export.json")) as handle:
        assert json.load(handle)["model_class"] == "ToyClassifier"
    assert os.path.isfile(os.path.join(export, "assets.extra", "tf_serving_warmup_requests"))


@pytest.mark.slow
def test_kseq_train_trains_the_toy_task_from_a_recipe_file(tmp_path, capsys, monkeypatch):
    recipe, data = tmp_path / "toy.json", tmp_path / "toy.tsv"
    recipe.write_text(json.dumps(RECIPE), encoding="utf-8")
    data.write_text("".join(f"{t}\t{label}\n" for t, label in PAIRS * 2), encoding="utf-8")
    output = str(tmp_path / "run")
    assert kseq_command(["train", str(recipe), "--data", str(data), "--output", output]) in (0, None)
    model = load_trained(output)
    assert type(model) is ToyClassifier and model.loss.pad_id == -1
    served = served_labels(model, [t for t, _ in PAIRS])
    assert np.mean([s == label for s, (_, label) in zip(served, PAIRS)]) > 0.9
    assert "saved" in capsys.readouterr().out
    # Commands this task does not support say so in one line (on the model loaded above: a
    # second load of the folder checks nothing more).
    load_presets_once(monkeypatch, {output: model}, folders=[output])
    assert kseq_command(["translate", output, "one"]) == 2
    assert "needs a model with `translate`" in capsys.readouterr().err
