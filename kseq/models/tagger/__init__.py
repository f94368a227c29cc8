"""The tagger task: a sentence in, one tag per word out (`SequenceTagger`, its
preprocessor, its architectures, its serving endpoints)."""

from kseq.models.tagger.tagger_preprocessor import TaggerPreprocessor  # noqa: F401
from kseq.models.tagger.sequence_tagger import SequenceTagger  # noqa: F401
from kseq.models.tagger.architectures import TAGGER_ENCODERS, build_tagger  # noqa: F401
# Its architectures module imports the class: the folder tells the class its builder.
SequenceTagger.register_builder(build_tagger, TAGGER_ENCODERS)
