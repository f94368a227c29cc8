"""The files a command names, checked before TensorFlow loads (a missing file is said in
well under a second, not after TensorFlow's 5-9 s start).

A model argument is a run folder (`kseq train --output`, holding `model.keras`), a
`.keras` file, a CTranslate2 export or a preset name; `--data` / `--valid` a file, a glob or
a folder; a captioner's (or image classifier's) arguments image files. Nothing here
imports TensorFlow: whether a model reads images is read from its `.keras` archive's
`config.json` (a zip member), not by loading it.

Example:
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> check_model_argument(os.path.join(folder, "gone"))
Traceback (most recent call last):
...
kseq.errors.KseqError: No such model folder or .keras file. Received: .../gone
>>> check_model_argument("numbers_fr_transformer")  # a preset with weights: fine
>>> reads_images("shapes_captioner"), reads_images("sms_spam_classifier")
(True, False)
"""

import glob
import json
import os
import zipfile

from kseq.errors import KseqError

# The preprocessors whose inputs are image files (their `input_kind == "images"`;
# tests/test_cli_missing_paths.py keeps this equal to the classes), named here: no TensorFlow.
IMAGE_PREPROCESSORS = ("CaptionerPreprocessor", "ImageClassifierPreprocessor")


def check_model_argument(model_dir):
    """Raises `KseqError` for a model argument that names nothing loadable: a missing path
    (a bare name that is no preset lists the close preset names), a folder without
    `model.keras`, a file that is not `.keras`, a preset without trained weights."""
    from kseq.ctranslate2 import is_ctranslate2_export
    from kseq.presets.catalog import checked_weights_path, has_weights, is_preset

    if os.path.isdir(model_dir):
        if not (is_ctranslate2_export(model_dir)
                or os.path.isfile(os.path.join(model_dir, "model.keras"))):
            raise KseqError(f"No trained model here: the folder holds no model.keras (`kseq "
                            f"train --output` writes it). Received: {model_dir}")
    elif os.path.exists(model_dir):
        if not str(model_dir).endswith(".keras"):
            raise KseqError(f"A model is a folder (kseq train --output), a .keras file or a "
                            f"preset name, not this file. Received: {model_dir}")
    elif is_preset(model_dir):
        if not has_weights(model_dir):
            checked_weights_path(model_dir)  # raises: how to train it, or build it untrained
    elif _looks_like_a_name(model_dir):
        raise _unknown_name(model_dir, "model folder, .keras file or preset")
    else:
        raise KseqError(f"No such model folder or .keras file. Received: {model_dir}")


def _unknown_name(name, what):
    """The error for `name`, neither a file nor a preset: the close preset names (or all of
    them, as the API lists them)."""
    from kseq.presets.catalog import close_presets, presets

    close, names = close_presets(name), presets()
    listed = (f"close presets: {', '.join(close)}" if close
              else f"the presets: {', '.join(names)}")
    return KseqError(f"No {what} named {name!r}; {listed} (`kseq presets` describes them). "
                     f"Received: {name}")


def _looks_like_a_name(text):
    """A bare word (no folder, no `.keras` / `.json` suffix): meant as a preset's name."""
    return os.sep not in text and "/" not in text and not text.endswith((".keras", ".json"))


def check_data_argument(items, flag="--data"):
    """Raises `KseqError` when one of `items` (`--data` / `--valid` values: files, globs,
    folders) names nothing: as `kseq.data.corpus.corpus_files` says it, which reads them
    later (and checks what a folder holds)."""
    for item in [items] if isinstance(items, str) else items or ():
        if os.path.exists(item):
            continue
        if glob.has_magic(item):
            if not any(os.path.isfile(path) for path in glob.iglob(item)):
                raise KseqError(f"No file matches the pattern. Received: {flag} {item}")
        else:
            raise KseqError(f"No such data file. Received: {flag} {item}")


def check_evaluation_data(data, model_dir):
    """`kseq evaluate --data`: a file, or the `test` / `valid` split of the model's run (a
    run folder, or the folder of its `model.keras`, holding `recipe.json`; or a preset)."""
    if os.path.isfile(data):
        return
    if data in ("test", "valid"):
        folder = model_dir if os.path.isdir(model_dir) else os.path.dirname(
            os.path.abspath(model_dir))
        if os.path.exists(model_dir) and not any(  # a CTranslate2 export is said later
                os.path.isfile(os.path.join(folder, name))
                for name in ("recipe.json", "kseq_ctranslate2.json")):
            raise KseqError(f"--data {data} is a split of the run a model trained in; this "
                            f"model has no run folder (recipe.json): give --data FILE. "
                            f"Received: --data {data}")
        return
    takes = "a TSV or CSV file, or test / valid: a split of the model's run"
    if os.path.isdir(data):
        raise KseqError(f"--data takes no folder ({takes}). Received: --data {data}")
    raise KseqError(f"No such data file (--data takes {takes}). Received: --data {data}")


def unreadable_images(paths):
    """`{path: reason}` for each of `paths` that cannot be opened, in the words the image
    reader uses (`kseq.data.pipeline.image_inputs`)."""
    reasons = {}
    for path in paths:
        try:
            with open(path, "rb"):
                pass
        except OSError as error:
            reasons[path] = (f"Cannot read the image file ({error.strerror}). "
                             f"Received: {path}")
    return reasons


def reads_images(model_dir):
    """Whether the model `model_dir` names reads image files (a captioner, an image
    classifier), from its `.keras` archive's config; False where there is none to read."""
    path = _keras_archive(model_dir)
    try:
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json"))
        name = config["config"]["preprocessor"]["class_name"]
    except (OSError, KeyError, TypeError, ValueError, zipfile.BadZipFile):
        return False  # loading it will say what is wrong
    return name in IMAGE_PREPROCESSORS


def _keras_archive(model_dir):
    from kseq.presets.catalog import is_preset, preset_recipe, presets_folder

    if os.path.isdir(model_dir):
        return os.path.join(model_dir, "model.keras")
    if not os.path.exists(model_dir) and is_preset(model_dir):
        entry = preset_recipe(model_dir).get("weights") or {}
        return os.fspath(presets_folder() / entry.get("file", "-"))
    return model_dir
