"""The language model task: the next token from the previous ones, optionally from a category
(`LanguageModel`, its preprocessor, its three architectures, its serving endpoints)."""

from kseq.models.language_model.language_model_preprocessor import (  # noqa: F401
    LanguageModelPreprocessor)
from kseq.models.language_model.language_model import LanguageModel  # noqa: F401
from kseq.models.language_model.perplexity import PerplexityResult  # noqa: F401
from kseq.models.language_model.architectures import (ARCHITECTURES,  # noqa: F401
                                                      build_language_model)

# Its architectures module imports the class: the folder tells the class its builder.
LanguageModel.register_builder(build_language_model, ARCHITECTURES)
