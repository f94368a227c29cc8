"""A trained model's `.keras` file, or a `kseq train` run folder, as `kseq.zoo.<task>(path)`
loads it: the task checked, the run's recipe attached, compiled afresh."""

import json
import os

import keras

from kseq.errors import KseqError, one_line
from kseq.presets.keras_archive import check_declared_size


def saved_model_file(value):
    """The `.keras` file `value` names: itself, or a run folder's `model.keras`; None when
    `value` names neither (a preset, a recipe file, an architecture). A missing `.keras`
    file, or a run folder that holds no finished model, is `KseqError`."""
    if not isinstance(value, (str, os.PathLike)):
        return None
    path = os.fspath(value)
    if os.path.isdir(path):
        model_file = os.path.join(path, "model.keras")
        if os.path.isfile(model_file):
            return model_file
        if os.path.isfile(os.path.join(path, "recipe.json")):
            raise KseqError(f"The run folder {path} holds no model.keras yet: the same `kseq "
                            f"train` command resumes it to the end. Received: {path}")
        return None
    if path.endswith(".keras") and not os.path.isfile(path):
        raise KseqError(f"No such model file. Received: {path}")
    return path if path.endswith(".keras") else None


def _run_recipe(path):
    """The `recipe.json` beside a run folder's `model.keras`, or None."""
    recipe_path = os.path.join(os.path.dirname(os.path.abspath(path)), "recipe.json")
    if os.path.basename(path) != "model.keras" or not os.path.isfile(recipe_path):
        return None
    try:
        with open(recipe_path, encoding="utf-8") as handle:
            recipe = json.load(handle)
    except (OSError, ValueError) as error:
        raise KseqError(f"{recipe_path} is unreadable ({one_line(error, 120)}). "
                        f"Received: {recipe_path}") from None
    return recipe if isinstance(recipe, dict) else None


def load_saved_task(task, path, given=None):
    """The `task` model saved at `path` (a `.keras` file or a run folder: `saved_model_file`),
    in float32 as saved, with the run's recipe in `model.recipe` when the file is a run
    folder's `model.keras`, and compiled with that recipe's training section (else the
    defaults): a fresh optimizer. `given` (the names of the zoo builder's other arguments
    that were given) must be empty: the file brings its vocabulary and hyper-parameters.
    `kseq.zoo.classifier("runs/sms")` is `load_saved_task(SequenceClassifier, "runs/sms")`.
    """
    if given:
        raise KseqError(f"A saved model brings its own vocabulary and hyper-parameters "
                        f"({path}); train it further with `fit`. Received: {', '.join(given)}")
    path = saved_model_file(path)
    check_declared_size(path)  # a zip bomb is refused before anything is extracted
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")  # the file's policy is not its inputs' own
    try:
        model = keras.saving.load_model(path, compile=False)
    except Exception as error:  # noqa: BLE001 - a torn zip fails deep inside Keras
        raise KseqError(f"{path} is not a readable Keras model ({one_line(error, 200)}). "
                        f"Received: {path}") from None
    finally:
        keras.config.set_dtype_policy(previous)
    if not isinstance(model, task):
        kind = getattr(model, "preset_task", None) or type(model).__name__
        raise KseqError(f"{path} holds a {kind} ({type(model).__name__}), not a "
                        f"{task.preset_task}. Received: {path}")
    recipe = _run_recipe(path)
    if recipe is not None:
        model.recipe = recipe
    return model.compile_from_recipe((recipe or {}).get("training", {}))
