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

from kseq.presets import rebuilt_backbones
from kseq.atomic_files import atomic_path, atomic_write_text, file_sha256
from kseq.errors import KseqError
from kseq.presets.keras_archive import copy_tree, dataset_count, rewrite_weights

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
    with its recipe in `model.recipe`, compiled with the recipe's training defaults.
    A frozen backbone the file leaves out (`kseq.presets.rebuilt_backbones`) is filled back in
    from its source first."""
    import tempfile

    import keras

    path = checked_weights_path(name)
    rebuilt = preset_recipe(name)["weights"].get("rebuilt", {})
    try:
        with tempfile.TemporaryDirectory() as scratch:
            complete = _with_rebuilt_backbones(path, rebuilt, scratch) if rebuilt else path
            model = keras.saving.load_model(complete, safe_mode=True)
    except KseqError:
        raise
    except Exception as error:  # noqa: BLE001 - a torn file fails deep inside Keras
        reason = (str(error).splitlines() or [type(error).__name__])[0][:200]
        raise KseqError(f"The weights of preset {canonical_name(name)!r} do not load "
                        f"({reason}). Received: {path}") from error
    recipe = {k: v for k, v in preset_recipe(name).items() if k != "weights"}
    model.recipe = recipe
    return model.compile_from_recipe(recipe.get("training", {}))


def _with_rebuilt_backbones(path, rebuilt, scratch):
    """A copy of the `.keras` file at `path` in `scratch` with the left-out backbones'
    arrays filled in from their sources (`{group: {"source", "arrays"}}`)."""
    import h5py

    complete = os.path.join(scratch, os.path.basename(path))

    def fill(weights_file):
        with h5py.File(weights_file, "r+") as target:
            for group, entry in rebuilt.items():
                written = rebuilt_backbones.fill_group(target, group, entry["source"])
                rebuilt_backbones.check_filled(path, group, written, entry["arrays"])

    rewrite_weights(path, complete, fill, scratch)
    return complete


def slice_pairs(name):
    """The committed test slice of preset `name` (its catalog's `slice_200` file), as
    `(input, reference)` pairs: `source<TAB>target` lines of a `.tsv`, or
    `(PNG bytes, caption)` of a `.zip` whose `captions.tsv` holds `file<TAB>caption`.
    A damaged slice gives `KseqError` naming the file."""
    import zipfile

    from kseq.data.pipeline.parallel_text import read_tsv

    entry = preset_recipe(name)["weights"]["slice_200"]
    path = os.fspath(presets_folder() / entry["file"])
    try:
        if not path.endswith(".zip"):
            return read_tsv(path, strict=True)[0]
        with zipfile.ZipFile(path) as archive:
            lines = archive.read("captions.tsv").decode("utf-8").splitlines()
            rows = [line.split("\t") for line in lines]
            return [(archive.read(file), caption) for file, caption in rows]
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise KseqError(f"The test slice of preset {name!r} cannot be read ({error}). "
                        f"Received: {path}") from None


def without_optimizer(model):
    """The same model and weights, uncompiled: its file holds no optimizer state (Adam's
    two moments would triple a shipped file) and no compile config."""
    copy = type(model).from_config(model.get_config())
    copy.set_weights(model.get_weights())
    return copy


def save_shipped_keras(model, path, float16=True, left_out=None):
    """Saves `model` (without optimizer state) as a `.keras` file, its float32 weights
    stored as float16 if `float16`, and none of the arrays of the top-level layers in
    `left_out` (`{layer: source}`: frozen backbones rebuilt on loading; their groups
    stay, empty). Returns the catalog's `rebuilt` entries: `{group path: {"source",
    "arrays"}}`.

    Keras writes each variable in its own dtype, so the file is rewritten here:
    the archive's `model.weights.h5` is copied with float16 arrays; Keras casts
    them back to the variables' float32 when loading. Halves the file.
    """
    import tempfile

    import h5py

    rebuilt = {}
    with tempfile.TemporaryDirectory() as scratch, atomic_path(path) as final:
        plain = os.path.join(scratch, "model.keras")
        without_optimizer(model).save(plain)

        def rewrite(weights_file):
            with h5py.File(weights_file, "r") as source:
                for layer, origin in (left_out or {}).items():
                    group = rebuilt_backbones.group_of(source, layer, taken=rebuilt)
                    rebuilt[group] = {"source": origin, "arrays": dataset_count(source[group])}
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
    recipe_path = os.path.join(os.fspath(folder or presets_folder()), f"{name}.json")
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
    entry. For maintainers: `tools/preset_card.py` calls it for the checkpoint it
    chose. Both files are written under temporary names and moved into place (a kill
    leaves the old ones)."""
    folder = os.fspath(folder or presets_folder())
    path = os.path.join(folder, f"{name}.keras")
    rebuilt = save_shipped_keras(model, path, float16=float16,
                                 left_out=rebuilt_backbones.frozen_layers(model))
    return update_weights_entry(name, folder, file=f"{name}.keras",
                                bytes=os.path.getsize(path), sha256=file_sha256(path),
                                dtype="float16" if float16 else "float32",
                                rebuilt=rebuilt or None)
