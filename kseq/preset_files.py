"""The preset catalog: recipe files, their old names, and the trained weights some ship with.

Every preset is `kseq/presets/<name>.json` inside the package (so a plain
`pip install` has them). A preset with trained weights names them in its
`"weights"` entry: `{"file": "<name>.keras", "sha256": ..., "bytes": ...}`,
a Keras file beside the recipe, checked against its SHA-256 before Keras
reads it (with `safe_mode`). Old preset names stay loadable as aliases.

Example:
>>> canonical_name("libreoffice_fr_transformer")
'libreoffice_en_fr_transformer'
>>> has_weights("numbers_fr_transformer"), has_weights("numbers_fr_tiny")
(True, False)
"""

import json
import os
from importlib import resources

from kseq.atomic_files import atomic_path, atomic_write_text, file_sha256
from kseq.errors import KseqError

# Names presets had before they said both languages; they load the same recipe.
PRESET_ALIASES = {f"libreoffice_fr_{arch}": f"libreoffice_en_fr_{arch}"
                  for arch in ("transformer", "attention", "rnn", "conv")}


def presets_folder():
    return resources.files("kseq") / "presets"


def presets():
    """Names of the shipped presets, sorted (aliases not included)."""
    return sorted(p.name[:-5] for p in presets_folder().iterdir() if p.name.endswith(".json"))


def canonical_name(name):
    """A preset's current name (old names are aliases)."""
    return PRESET_ALIASES.get(name, name)


def is_preset(name):
    return isinstance(name, str) and canonical_name(name) in presets()


def preset_recipe(name):
    """The recipe of preset `name` (or an alias); `ValueError` listing the presets if unknown."""
    name = canonical_name(name)
    if name not in presets():
        raise ValueError(f"Unknown preset {name!r}; valid presets: {', '.join(presets())}."
                         f" Received: {name!r}")
    return json.loads((presets_folder() / f"{name}.json").read_text("utf-8"))


def has_weights(name):
    return "weights" in preset_recipe(name)


def checked_weights_path(name):
    """The path of preset `name`'s weights file, its SHA-256 verified; `KseqError` else."""
    name = canonical_name(name)
    entry = preset_recipe(name).get("weights")
    if not entry:
        raise KseqError(f"The preset {name!r} ships no trained weights: train it with `kseq "
                        f"train {name} --output DIR`, or build the untrained recipe with "
                        f"`load_weights=False`. Received: {name!r}")
    path = os.fspath(presets_folder() / entry["file"])
    if not os.path.isfile(path):
        raise KseqError(f"The weights of preset {name!r} are missing from this installation "
                        f"(reinstall kseq). Received: {path}")
    found = file_sha256(path)
    if found != entry["sha256"]:
        raise KseqError(f"The weights file of preset {name!r} is corrupt or truncated: its "
                        f"SHA-256 is {found}, the catalog's {entry['sha256']} (reinstall "
                        f"kseq). Received: {path}")
    return path


def load_preset_model(name):
    """Preset `name`'s trained model (weights verified, read with Keras's `safe_mode`),
    with its recipe in `model.recipe`, compiled with the recipe's training defaults."""
    import keras

    path = checked_weights_path(name)
    try:
        model = keras.saving.load_model(path, safe_mode=True)
    except Exception as error:  # noqa: BLE001 - a torn file fails deep inside Keras
        reason = (str(error).splitlines() or [type(error).__name__])[0][:200]
        raise KseqError(f"The weights of preset {canonical_name(name)!r} do not load "
                        f"({reason}). Received: {path}") from error
    recipe = {k: v for k, v in preset_recipe(name).items() if k != "weights"}
    model.recipe = recipe
    return model.compile_from_recipe(recipe.get("training", {}))


def _float16_copy(source, target):
    """Copies an HDF5 tree, float32 datasets stored as float16 (attributes kept)."""
    import numpy as np

    for key, value in source.attrs.items():
        target.attrs[key] = value
    for name, item in source.items():
        if hasattr(item, "dtype"):  # a dataset
            data = item[()]
            if item.dtype == np.float32:
                data = data.astype(np.float16)
            copied = target.create_dataset(name, data=data)
            for key, value in item.attrs.items():
                copied.attrs[key] = value
        else:
            _float16_copy(item, target.create_group(name))


def without_optimizer(model):
    """The same model and weights, uncompiled: its file holds no optimizer state (Adam's
    two moments would triple a shipped file) and no compile config."""
    copy = type(model).from_config(model.get_config())
    copy.set_weights(model.get_weights())
    return copy


def save_float16_keras(model, path):
    """Saves `model` (without optimizer state) as a `.keras` file whose float32 weights
    are stored as float16.

    Keras writes each variable in its own dtype, so the file is rewritten here:
    the archive's `model.weights.h5` is copied with float16 arrays; Keras casts
    them back to the variables' float32 when loading. Halves the file.
    """
    import tempfile
    import zipfile

    import h5py

    with tempfile.TemporaryDirectory() as scratch, atomic_path(path) as final:
        plain = os.path.join(scratch, "model.keras")
        without_optimizer(model).save(plain)
        with zipfile.ZipFile(plain) as archive, zipfile.ZipFile(final, "w") as out:
            for info in archive.infolist():
                data = archive.read(info.filename)
                if info.filename.endswith(".weights.h5"):
                    original, halved = (os.path.join(scratch, n) for n in ("w.h5", "w16.h5"))
                    with open(original, "wb") as handle:
                        handle.write(data)
                    with h5py.File(original, "r") as source, h5py.File(halved, "w") as target:
                        _float16_copy(source, target)
                    with open(halved, "rb") as handle:
                        data = handle.read()
                out.writestr(info, data)


def update_weights_entry(name, folder=None, **fields):
    """Merges `fields` into preset `name`'s catalog entry (its recipe's `"weights"`), the
    recipe file replaced whole; returns the entry."""
    recipe_path = os.path.join(os.fspath(folder or presets_folder()), f"{name}.json")
    with open(recipe_path, encoding="utf-8") as handle:
        recipe = json.load(handle)
    recipe["weights"] = {**recipe.get("weights", {}), **fields}
    atomic_write_text(recipe_path, json.dumps(recipe, indent=2, ensure_ascii=False) + "\n")
    return recipe["weights"]


def write_preset_weights(model, name, float16=True, folder=None):
    """Writes `model` as preset `name`'s weights (`<name>.keras`, float16 arrays unless
    `float16=False`) beside its recipe, and records the file in the recipe's catalog
    entry (`weights`: file, bytes, sha256, dtype). Returns the entry. For maintainers:
    `benchmarks/preset_card.py` calls it for the checkpoint it chose. Both files are
    written under temporary names and moved into place (a kill leaves the old ones)."""
    folder = os.fspath(folder or presets_folder())
    path = os.path.join(folder, f"{name}.keras")
    if float16:
        save_float16_keras(model, path)
    else:
        with atomic_path(path) as scratch:
            without_optimizer(model).save(scratch)
    return update_weights_entry(name, folder, file=f"{name}.keras",
                                bytes=os.path.getsize(path), sha256=file_sha256(path),
                                dtype="float16" if float16 else "float32")
