"""The translator task: text in, text out (`Translator`, its preprocessor, its four
architectures, its serving endpoints)."""

from kseq.models.translator.translator_preprocessor import TranslatorPreprocessor  # noqa: F401
from kseq.models.translator.translator import Translator  # noqa: F401
from kseq.models.translator.architectures import (ARCHITECTURE_PARTS, ARCHITECTURES,  # noqa: F401
                                                  build_translator)
# Its architectures module imports the class: the folder tells the class its builder.
Translator.register_builder(build_translator, ARCHITECTURE_PARTS)
from kseq.models.translator import legacy  # noqa: F401,E402  (last: reads kseq 0.1 files)
