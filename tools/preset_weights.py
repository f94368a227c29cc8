"""Release-time writers of a preset's shipped weights (maintainers only; not installed).

A shipped preset's `.keras` file holds no optimizer state, stores float32
arrays as float16 (Keras casts them back when loading) and leaves out a
frozen ImageNet backbone that loading rebuilds
(`kseq.presets.rebuilt_backbones`); its recipe's `"weights"` entry records
the file, size, SHA-256 and dtype, which `kseq.presets.catalog` checks before
reading it. `tools/preset_card.py` calls `write_preset_weights` for the
checkpoint it chose; tests import this module with `tools/` on `sys.path`.

Example (with `tools/` on `sys.path`):
    import preset_weights
    entry = preset_weights.write_preset_weights(model, "numbers_fr_transformer")
"""

import json
import os
import tempfile

from kseq.atomic_files import atomic_path, atomic_write_text, file_sha256
from kseq.export.inference_copy import without_optimizer
from kseq.presets import rebuilt_backbones
from kseq.presets import catalog
from kseq.presets.keras_archive import copy_tree, dataset_count, rewrite_weights


def save_shipped_keras(model, path, float16=True, left_out=None):
    """Saves `model` (without optimizer state) as a `.keras` file, its float32 weights
    stored as float16 if `float16`, and none of the arrays of the top-level layers in
    `left_out` (`{layer: source}`: frozen backbones rebuilt on loading; their groups
    stay, empty). Returns the catalog's `rebuilt` entries: `{group path: {"source",
    "arrays", "sha256"}}` (the SHA-256 of the left-out values, checked on loading).

    Keras writes each variable in its own dtype, so the file is rewritten here:
    the archive's `model.weights.h5` is copied with float16 arrays; Keras casts
    them back to the variables' float32 when loading. Halves the file.
    """
    import h5py

    rebuilt = {}
    with tempfile.TemporaryDirectory() as scratch, atomic_path(path) as final:
        plain = os.path.join(scratch, "model.keras")
        without_optimizer(model).save(plain)

        def rewrite(weights_file):
            with h5py.File(weights_file, "r") as source:
                for layer, origin in (left_out or {}).items():
                    group = rebuilt_backbones.group_of(source, layer, taken=rebuilt)
                    rebuilt[group] = {"source": origin, "arrays": dataset_count(source[group]),
                                      "sha256": rebuilt_backbones.values_sha256(source[group])}
                with h5py.File(weights_file + ".new", "w") as target:
                    copy_tree(source, target, float16, tuple(rebuilt))
            os.replace(weights_file + ".new", weights_file)

        rewrite_weights(plain, final, rewrite, scratch)
    return rebuilt


def save_float16_keras(model, path):
    """`save_shipped_keras` with float16 arrays and nothing left out."""
    save_shipped_keras(model, path, float16=True)


def update_weights_entry(name, folder=None, **fields):
    """Merges `fields` into preset `name`'s catalog entry (its recipe's `"weights"`), the
    recipe file replaced whole; a field set to None is removed. Returns the entry."""
    recipe_path = os.path.join(os.fspath(folder or catalog.presets_folder()), f"{name}.json")
    with open(recipe_path, encoding="utf-8") as handle:
        recipe = json.load(handle)
    merged = {**recipe.get("weights", {}), **fields}
    recipe["weights"] = {key: value for key, value in merged.items() if value is not None}
    atomic_write_text(recipe_path, json.dumps(recipe, indent=2, ensure_ascii=False) + "\n")
    return recipe["weights"]


def write_preset_weights(model, name, float16=True, folder=None):
    """Writes `model` as preset `name`'s weights (`<name>.keras`, float16 arrays unless
    `float16=False`, a frozen pretrained backbone left out: `kseq.presets.rebuilt_backbones`)
    beside its recipe, and records the file in the recipe's catalog entry (`weights`:
    file, bytes, sha256, dtype, and `rebuilt` for a left-out backbone). Returns the
    entry. Both files are written under temporary names and moved into place (a kill
    leaves the old ones)."""
    folder = os.fspath(folder or catalog.presets_folder())
    path = os.path.join(folder, f"{name}.keras")
    rebuilt = save_shipped_keras(model, path, float16=float16,
                                 left_out=rebuilt_backbones.frozen_layers(model))
    return update_weights_entry(name, folder, file=f"{name}.keras",
                                bytes=os.path.getsize(path), sha256=file_sha256(path),
                                dtype="float16" if float16 else "float32",
                                rebuilt=rebuilt or None)
