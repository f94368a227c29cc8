"""The captioner task: an image in, text out (`Captioner`, its preprocessor, its
architectures, its serving endpoints)."""

from kseq.models.captioner.captioner_preprocessor import CaptionerPreprocessor  # noqa: F401
from kseq.models.captioner.captioner import Captioner  # noqa: F401
from kseq.models.captioner.architectures import build_captioner  # noqa: F401
