"""The model a command runs: loaded from a folder, a `.keras` file or a preset, with the
close preset names for a name that is none of them."""

from kseq.cli.path_checks import _looks_like_a_name, _unknown_name  # noqa: F401 (train's)
from kseq.cli.path_checks import check_model_argument
from kseq.errors import KseqError


def _import_every_room():
    """What `import kseq` does outside the command (TensorFlow, Keras, and every kseq class
    registered with Keras), for the commands that load or train a model."""
    from kseq import data, decoding, layers, metrics, models, text, zoo  # noqa: F401


def _load_task(model_dir, command):
    """The trained model of `model_dir` (a run folder, a `.keras` file, a CTranslate2 export
    or a preset), when its task answers `command` (its `cli_verbs`). A missing one is said
    before TensorFlow loads; a bare name that is no preset lists the close preset names."""
    check_model_argument(model_dir)  # before TensorFlow loads: a missing model says so at once
    from kseq.ctranslate2 import is_ctranslate2_export, load_ctranslate2_export

    if is_ctranslate2_export(model_dir):
        # Translates (or generates, a language model's); needs no TensorFlow: this process
        # stays that small.
        model = load_ctranslate2_export(model_dir)
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
