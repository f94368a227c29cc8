"""Losses and metrics that ignore padding, and corpus scores of generated text."""

from kseq.metrics.masked_accuracy import MaskedAccuracy
from kseq.metrics.masked_cross_entropy import MaskedSparseCrossEntropy
from kseq.metrics.bleu_callback import BleuCallback
from kseq.metrics.validation_score_callback import ValidationScoreCallback
from kseq.metrics.cider import cider
