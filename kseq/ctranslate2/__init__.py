"""Running a CTranslate2 export of a kseq translator (or language model), without TensorFlow.

`kseq export MODEL --format ctranslate2` writes the folder
(`kseq.models.translator.ctranslate2_export`, which reads the Keras weights);
`CTranslate2Translator` translates with it, tokenising with
`kseq.text.PlainTokenizer`; `CTranslate2LanguageModel` generates with a language
model's export (`kseq.models.language_model.ctranslate2_export`). Nothing here imports
TensorFlow, so `kseq translate CT2_FOLDER` is a process of CTranslate2's size, not
TensorFlow's.
"""

from kseq.ctranslate2.translator import (  # noqa: F401
    CONFIG_FILE,
    CTranslate2Translator,
    is_ctranslate2_export,
    load_ctranslate2_translator,
)
from kseq.ctranslate2.language_model import CTranslate2LanguageModel  # noqa: E402,F401


def load_ctranslate2_export(directory, **options):
    """The runner of a kseq CTranslate2 folder: a `CTranslate2LanguageModel` for a language
    model's export, else a `CTranslate2Translator`."""
    import json
    import os

    try:
        with open(os.path.join(os.fspath(directory), CONFIG_FILE), encoding="utf-8") as handle:
            task = json.load(handle).get("task")
    except (OSError, ValueError, AttributeError):
        task = None  # the translator's reader names what is wrong
    runner = CTranslate2LanguageModel if task == "language_model" else CTranslate2Translator
    return runner(directory, **options)
