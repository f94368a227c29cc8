"""kseq: a Keras 3 / TensorFlow model zoo for sequence-to-sequence learning."""

__version__ = "0.1.0"

from kseq import data, decoding, layers, metrics, models, text, zoo  # noqa: E402
