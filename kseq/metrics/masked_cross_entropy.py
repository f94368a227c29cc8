"""Sparse cross-entropy with label smoothing that ignores padding."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kseq")
class MaskedSparseCrossEntropy(keras.losses.Loss):
    """Token-level cross-entropy from logits, averaged over non-padding targets.

    Label smoothing spreads `label_smoothing` of the mass uniformly over the
    `V` classes (Szegedy et al.), as Keras's categorical loss does; Keras 3's
    sparse loss has no such option. Targets equal to `pad_id` add nothing, and
    the result is the mean over the real tokens of the batch (0 if there are none).

    Args:
        label_smoothing: in `[0, 1)`.
        pad_id: target id that is ignored.

    Example:
    >>> import numpy as np, kseq
    >>> loss = kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=0.0)
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], "float32"))
    >>> round(float(loss(np.array([[1, 0]]), logits)), 4)  # second target is padding
    0.6931
    """

    def __init__(self, label_smoothing=0.0, pad_id=0, name="masked_cross_entropy", **kwargs):
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(
                f"`label_smoothing` must be in [0, 1). Received: label_smoothing={label_smoothing}"
            )
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing
        self.pad_id = pad_id

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        logits = ops.cast(y_pred, "float32")
        log_probs = ops.log_softmax(logits, axis=-1)
        true_log_prob = ops.take_along_axis(log_probs, y_true[..., None], axis=-1)[..., 0]
        smooth = self.label_smoothing
        per_token = -(1.0 - smooth) * true_log_prob
        if smooth:
            per_token -= smooth * ops.mean(log_probs, axis=-1)
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        # A scalar result: Keras leaves it as is, so the mean is over real tokens only.
        return ops.divide_no_nan(ops.sum(per_token * mask), ops.sum(mask))

    def get_config(self):
        return {
            **super().get_config(),
            "label_smoothing": self.label_smoothing,
            "pad_id": self.pad_id,
        }
