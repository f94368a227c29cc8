"""The model a command runs: loaded from a folder, a `.keras` file or a preset, with the
close preset names for a name that is none of them."""

import os

from kseq.errors import KseqError


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
    return os.sep not in text and "/" not in text and not text.endswith((".keras", ".json"))


def _import_every_room():
    """What `import kseq` does outside the command (TensorFlow, Keras, and every kseq class
    registered with Keras), for the commands that load or train a model."""
    from kseq import data, decoding, layers, metrics, models, text, zoo  # noqa: F401


def _load_task(model_dir, command):
    """The trained model of `model_dir` (a run folder, a `.keras` file, a CTranslate2 export
    or a preset), when its task answers `command` (its `cli_verbs`). A missing one is said
    before TensorFlow loads; a bare name that is no preset lists the close preset names."""
    from kseq.cli.path_checks import check_model_argument

    check_model_argument(model_dir)  # before TensorFlow loads: a missing model says so at once
    from kseq.ctranslate2 import CTranslate2Translator, is_ctranslate2_export

    if is_ctranslate2_export(model_dir):
        # Translates, nothing else; and needs no TensorFlow: this process stays that small.
        model = CTranslate2Translator(model_dir)
    else:
        _import_every_room()
        from kseq.training import load_trained

        model = load_trained(model_dir)
    verbs = getattr(model, "cli_verbs", ())
    if command not in verbs:
        raise KseqError(f"`kseq {command}` needs a model with `{command}`; this folder holds "
                        f"a {type(model).__name__}, which answers {', '.join(verbs) or 'none'}. "
                        f"Received: {model_dir}")
    return model
