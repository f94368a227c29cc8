"""The captioner task: an image in, text out (`Captioner`, its preprocessor, its
architectures, its serving endpoints)."""

from kseq.models.captioner.captioner_preprocessor import CaptionerPreprocessor  # noqa: F401
from kseq.models.captioner.captioner import Captioner  # noqa: F401
from kseq.models.captioner.architectures import ENCODERS, build_captioner  # noqa: F401
# Its architectures module imports the class: the folder tells the class its builder.
Captioner.register_builder(build_captioner, ENCODERS)
