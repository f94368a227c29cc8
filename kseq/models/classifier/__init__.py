"""The classifier task: text or an image in, one label out (`SequenceClassifier`, its
preprocessors, its architectures, its serving endpoints)."""

from kseq.models.classifier.classifier_preprocessor import ClassifierPreprocessor  # noqa: F401
from kseq.models.classifier.image_classifier_preprocessor import (  # noqa: F401
    ImageClassifierPreprocessor)
from kseq.models.classifier.sequence_classifier import SequenceClassifier  # noqa: F401
from kseq.models.classifier.architectures import (CLASSIFIER_ENCODERS,  # noqa: F401
                                                  build_classifier)
# Its architectures module imports the class: the folder tells the class its builder.
SequenceClassifier.register_builder(build_classifier, CLASSIFIER_ENCODERS)
