"""Preprocessors: raw inputs -> model inputs, model outputs -> strings, inside the graph.

This package holds the shared pieces; each task keeps its own preprocessor in its
folder (`kseq.models.translator.TranslatorPreprocessor`, ...).

The protocol (`Preprocessor`): `__call__(x, y)` on a batch of raw inputs gives
`(features, labels)` for training (ragged, usable in `dataset.map`);
`inference_inputs(x)` gives the padded model inputs a search or a serving
endpoint reads, with `truncated`/`empty` flags; `detokenize(ids)` gives
strings; `input_signature` types the search's input; `training_dataset`
buckets and pads. A preprocessor is the one place where text becomes ids:
training, `generate()`/`translate()` and the exported model all call it.
"""

from kseq.models.preprocessors.preprocessor import Preprocessor  # noqa: F401
