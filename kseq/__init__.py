"""kseq: a Keras 3 / TensorFlow model zoo for sequence-to-sequence learning."""

from kseq.version import __version__  # noqa: F401
from kseq import data, decoding, layers, metrics, models, text, zoo  # noqa: E402
