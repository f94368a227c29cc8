"""The translator task: text in, text out (`Translator`, its preprocessor, its four
architectures, its serving endpoints)."""

from kseq.models.translator.translator_preprocessor import TranslatorPreprocessor  # noqa: F401
from kseq.models.translator.translator import Translator  # noqa: F401
from kseq.models.translator.architectures import ARCHITECTURES, build_translator  # noqa: F401
