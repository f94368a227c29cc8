"""Preprocessors: raw inputs -> model inputs, model outputs -> strings, inside the graph.

The protocol (`Preprocessor`): `__call__(x, y)` on a batch of raw inputs gives
`(features, labels)` for training (ragged, usable in `dataset.map`);
`inference_inputs(x)` gives the padded model inputs a search or a serving
endpoint reads, with `truncated`/`empty` flags; `detokenize(ids)` gives
strings; `input_signature` types the search's input; `training_dataset`
buckets and pads. A preprocessor is the one place where text becomes ids:
training, `generate()`/`translate()` and the exported model all call it.
"""

from kseq.models.preprocessors.preprocessor import Preprocessor
from kseq.models.preprocessors.translator_preprocessor import TranslatorPreprocessor
from kseq.models.preprocessors.captioner_preprocessor import CaptionerPreprocessor
from kseq.models.preprocessors.classifier_preprocessor import ClassifierPreprocessor
from kseq.models.preprocessors.image_classifier_preprocessor import ImageClassifierPreprocessor
from kseq.models.preprocessors.tagger_preprocessor import TaggerPreprocessor
