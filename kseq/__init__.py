"""kseq: a Keras 3 / TensorFlow model zoo for sequence-to-sequence learning."""

__version__ = "0.1.0"

from kseq import decoding, layers, metrics  # noqa: E402
