"""The preset catalog: recipe files, their old names, and the trained weights some ship with.

Every preset is `kseq/presets/<name>.json` inside the package (so a plain
`pip install` has them). A preset with trained weights names them in its
`"weights"` entry: `{"file": "<name>.keras", "sha256": ..., "bytes": ...}`,
a Keras file beside the recipe, checked against its SHA-256 before Keras
reads it (with `safe_mode`). Old preset names stay loadable as aliases.
Besides its `"description"`, a recipe names its `"domain"` in a few words (the
kind of input it was made for: "SMS messages", "ImageNet photos"), which
`kseq presets` shows; like `"sources"` (where weights and names come from), the
task builders do not read it.
The release-time writers of those files live in `tools/preset_weights.py`.

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
from kseq.atomic_files import file_sha256
from kseq.errors import KseqError
from kseq.presets.keras_archive import rewrite_weights

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


def close_presets(name):
    """Preset names like `name` (at most 6): those containing it, then difflib's close
    matches; the names an unknown-preset error suggests, in the API as in the command.

    Example:
    >>> close_presets("numbers_fr_transfomer")[:2]
    ['numbers_fr_transformer', 'numbers_de_transformer']
    """
    import difflib

    names = presets()
    close = [preset for preset in names if name and name in preset]
    close += difflib.get_close_matches(name, names, n=5, cutoff=0.6)
    return list(dict.fromkeys(close))[:6]


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
    arrays filled in from their sources (`{group: {"source", "arrays", "sha256"}}`), each
    checked against the catalog (`rebuilt_backbones.fill_checked`)."""
    import h5py

    complete = os.path.join(scratch, os.path.basename(path))

    def fill(weights_file):
        with h5py.File(weights_file, "r+") as target:
            for group, entry in rebuilt.items():
                rebuilt_backbones.fill_checked(target, group, entry, path)

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
