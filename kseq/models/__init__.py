"""Task models (one folder each), their parts (encoders, decoders) and preprocessors."""

from kseq.models import decoders, encoders, preprocessors  # noqa: F401
from kseq.models.preprocessors import Preprocessor  # noqa: F401
from kseq.models.fused_adam import FusedAdam  # noqa: F401
from kseq.models.task import Task  # noqa: F401
from kseq.models.generative_task import GenerativeTask  # noqa: F401
from kseq.models.encoder_decoder_task import EncoderDecoderTask  # noqa: F401
from kseq.models import part_catalog  # noqa: F401  (filled by encoders/, decoders/ above)
from kseq.models.translator import (ARCHITECTURES, Translator,  # noqa: F401
                                    TranslatorPreprocessor, build_translator)
from kseq.models.captioner import Captioner, CaptionerPreprocessor, build_captioner  # noqa
from kseq.models.classifier import (ClassifierPreprocessor,  # noqa: F401
                                    ImageClassifierPreprocessor, SequenceClassifier,
                                    build_classifier)
from kseq.models.tagger import SequenceTagger, TaggerPreprocessor, build_tagger  # noqa: F401
from kseq.models.language_model import (LanguageModel, LanguageModelPreprocessor,  # noqa: F401
                                        build_language_model)
