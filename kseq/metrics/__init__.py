"""Losses and metrics that ignore padding."""

from kseq.metrics.masked_accuracy import MaskedAccuracy
from kseq.metrics.masked_cross_entropy import MaskedSparseCrossEntropy
from kseq.metrics.bleu_callback import BleuCallback
