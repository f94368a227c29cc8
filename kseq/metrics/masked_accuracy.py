"""Token accuracy over non-padding targets."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kseq")
class MaskedAccuracy(keras.metrics.Metric):
    """Share of real (non-`pad_id`) target tokens whose argmax prediction is right.

    Example:
    >>> import numpy as np, kseq
    >>> metric = kseq.metrics.MaskedAccuracy()
    >>> logits = np.array([[[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]], "float32")
    >>> metric.update_state(np.array([[1, 1, 0]]), logits)
    >>> float(metric.result())
    0.5
    """

    def __init__(self, pad_id=0, name="masked_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        hits = ops.cast(ops.equal(predicted, y_true), "float32") * mask
        self.correct.assign_add(ops.sum(hits))
        self.total.assign_add(ops.sum(mask))

    def result(self):
        return ops.divide_no_nan(self.correct, self.total)

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}
