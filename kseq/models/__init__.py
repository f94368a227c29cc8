"""Task models, their parts (encoders, decoders) and their preprocessors."""

from kseq.models import decoders, encoders, preprocessors
from kseq.schedules import WarmupInverseSqrt  # the schedule's old home, kept for users
from kseq.models.preprocessors import (CaptionerPreprocessor, ClassifierPreprocessor,
                                       ImageClassifierPreprocessor, Preprocessor,
                                       TaggerPreprocessor, TranslatorPreprocessor)
from kseq.models.task import Task
from kseq.models.generative_task import GenerativeTask
from kseq.models.translator import Translator
from kseq.models.translator_architectures import (ARCHITECTURES, ConvTranslator, RnnTranslator,
                                                  build_translator)
from kseq.models.captioner import Captioner
from kseq.models.captioner_architectures import build_captioner
from kseq.models.sequence_classifier import SequenceClassifier
from kseq.models.classifier_architectures import build_classifier
from kseq.models.sequence_tagger import SequenceTagger
from kseq.models.tagger_architectures import build_tagger
