"""Task models and their preprocessors."""

from kseq.models.learning_rate import WarmupInverseSqrt
from kseq.models.seq2seq_task import Seq2SeqTask
from kseq.models.conv_translator import ConvTranslator
from kseq.models.rnn_translator import RnnTranslator
from kseq.models.translator import Translator
from kseq.models.translator_preprocessor import TranslatorPreprocessor
