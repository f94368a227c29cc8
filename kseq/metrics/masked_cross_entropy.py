"""Sparse cross-entropy with label smoothing that ignores padding."""

import keras
import tensorflow as tf
from keras import ops


def _summed_over_replicas(count):
    """`count` summed over the replicas of a distributed train step (itself elsewhere).

    Each replica then returns its share of the mean over the global batch's
    real tokens, and the optimizer's all-reduce (a sum of the replicas'
    gradients) gives the gradient of that mean, as one device would on the
    whole batch, however the real tokens fall between replicas. (Keras's own
    reductions divide by the replica count instead: right only when every
    replica holds as many real tokens.)
    """
    context = tf.distribute.get_replica_context()  # None in a cross-replica context
    if context is None or context.num_replicas_in_sync == 1:
        return count
    return context.all_reduce(tf.distribute.ReduceOp.SUM, tf.stop_gradient(count))


@keras.saving.register_keras_serializable(package="kseq")
class MaskedSparseCrossEntropy(keras.losses.Loss):
    """Token-level cross-entropy from logits, averaged over non-padding targets.

    Label smoothing spreads `label_smoothing` of the mass uniformly over the
    `V` classes (Szegedy et al.), as Keras's categorical loss does; Keras 3's
    sparse loss has no such option. Targets equal to `pad_id` add nothing, and
    the result is the mean over the real tokens of the batch (0 if there are none);
    under a `tf.distribute` strategy, of the global batch (each replica returns
    its share).

    Args:
        label_smoothing: in `[0, 1)`.
        pad_id: target id that is ignored.
        class_weights: optional weight per class (imbalanced data): the loss
            is then the weighted mean, `sum(w[y] * loss) / sum(w[y])` over the
            real targets.

    Example:
    >>> import numpy as np, kseq
    >>> loss = kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=0.0)
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], "float32"))
    >>> round(float(loss(np.array([[1, 0]]), logits)), 4)  # second target is padding
    0.6931
    """

    def __init__(self, label_smoothing=0.0, pad_id=0, class_weights=None,
                 name="masked_cross_entropy", **kwargs):
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(
                f"`label_smoothing` must be in [0, 1). Received: label_smoothing={label_smoothing}"
            )
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing
        self.pad_id = pad_id
        self.class_weights = None if class_weights is None else [float(w) for w in class_weights]
        if self.class_weights is not None and min(self.class_weights, default=0.0) <= 0:
            raise ValueError("`class_weights` must be positive numbers, one per class. "
                             f"Received: class_weights={class_weights!r}")

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The mean itself. Keras would weight the scalar by the Keras mask of `y_pred` (a
        decoder's padding mask) and then divide it by the replica count, which undoes the
        global token count under a `tf.distribute` strategy; padding is masked here already."""
        if sample_weight is not None:  # Keras's weighting, as before
            return super().__call__(y_true, y_pred, sample_weight)
        with keras.name_scope(self.name):
            return self.call(y_true, y_pred)

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        logits = ops.cast(y_pred, "float32")
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        # A pad_id outside [0, V) (a class label's -1) must not reach the kernels,
        # which reject it: those rows read class 0 and are masked out below.
        if self.pad_id < 0:
            y_true = ops.where(ops.equal(y_true, self.pad_id), 0, y_true)
        # Fused kernels: each computes softmax once and keeps `softmax - target`
        # for the gradient. Passes over [B, T, V] dominate this loss on CPU;
        # log_softmax + gather + mean took twice as long (V 15k, 64 x 24 rows).
        if self.label_smoothing:
            vocab = ops.shape(logits)[-1]  # an int, or a tensor when not static
            smooth = self.label_smoothing
            spread = smooth / ops.cast(vocab, "float32")
            # tf.one_hot writes the smoothed target in one pass (keras.ops needs three).
            target = tf.one_hot(y_true, vocab, on_value=1.0 - smooth + spread,
                                off_value=spread)
            per_token = tf.nn.softmax_cross_entropy_with_logits(target, logits)
        else:
            per_token = ops.sparse_categorical_crossentropy(y_true, logits, from_logits=True)
        if self.class_weights is not None:
            mask = mask * ops.take(ops.convert_to_tensor(self.class_weights, "float32"), y_true)
        # A scalar result: Keras leaves it as is, so the mean is over real tokens only.
        return ops.divide_no_nan(ops.sum(per_token * mask), _summed_over_replicas(ops.sum(mask)))

    def get_config(self):
        return {
            **super().get_config(),
            "label_smoothing": self.label_smoothing,
            "pad_id": self.pad_id,
            "class_weights": self.class_weights,
        }
