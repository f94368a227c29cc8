"""A train step that runs the output projection on real label rows only.

The `[B, T, V]` projection is most of a translator's training work (E 256,
V 15,000: 23 of the 32 MFLOP per target token of a 1+1-layer Transformer), and
rows whose label is padding add nothing to the masked loss, so they are dropped
before it. Loss, metrics and gradients are those of Keras's step (tested).
"""

import keras
import tensorflow as tf  # GradientTape, boolean_mask and the distribution strategy

from kseq.metrics.masked_cross_entropy import MaskedSparseCrossEntropy


def _reason_not_to_apply(model, y, sample_weight):
    if not (hasattr(model, "hidden_states") and hasattr(model, "project")):
        return "the task defines no hidden_states/project hooks"
    if y is None:
        return "the data has no labels"
    if sample_weight is not None:
        return "the data has sample weights"
    if model.jit_compile:
        return "jit_compile is on (XLA needs static shapes)"
    if not isinstance(getattr(model, "loss", None), MaskedSparseCrossEntropy):
        return "the loss is not kseq.metrics.MaskedSparseCrossEntropy"
    return None


def real_rows_train_step(model, data):
    """One optimizer step of `model` on `data`: `(logs, None)`, or `(None, reason)`.

    `model` provides the task hooks `hidden_states(inputs, training)` (`[B, T, D]`
    or `[B, D]`, aligned with the labels `[B, T]` or `[B]`) and `project(states)`
    (float32 logits). Where this step could change a result — no hooks, sample
    weights, a loss other than `MaskedSparseCrossEntropy`, or `jit_compile` —
    it does nothing and says why; the caller then runs Keras's own step.
    """
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    reason = _reason_not_to_apply(model, y, sample_weight)
    if reason is not None:
        return None, reason
    real = tf.not_equal(y, model.loss.pad_id)  # [B, T] or [B]
    with tf.GradientTape() as tape:
        states = model.hidden_states(x, training=True)
        logits = model.project(tf.boolean_mask(states, real))  # [R, V]
        labels = tf.boolean_mask(y, real)  # [R]
        total = model.compute_loss(x=x, y=labels, y_pred=logits, training=True)
        scaled = model.optimizer.scale_loss(total)
    weights = model.trainable_weights
    model.optimizer.apply_gradients(zip(tape.gradient(scaled, weights), weights))
    _track_loss(model, total, tf.shape(y)[0])
    return model.compute_metrics(x, labels, logits), None


def _track_loss(model, total, batch_size):
    """Feeds the "loss" metric as Keras's step does (per replica, unscaled)."""
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    for metric in model.metrics:
        if metric.name == "loss":
            metric.update_state(total * replicas, sample_weight=batch_size)


def padding_as_weights(model, data):
    """`data` as Keras's own step gives it to a loss other than kseq's: padding labels
    (`model.label_pad_id`; -1 in a batch's padding rows) become class 0 with sample weight 0
    (real ones 1), so a Keras loss never sees an invalid class, and reduces as Keras reduces
    weighted values (its default averages over every label position). kseq's loss, and data
    with sample weights, pass as given."""
    if model.loss is None or isinstance(model.loss, MaskedSparseCrossEntropy):
        return data
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    if y is None or sample_weight is not None or "int" not in str(getattr(y, "dtype", "")):
        return data
    real = keras.ops.not_equal(y, model.label_pad_id)
    labels = keras.ops.where(real, y, keras.ops.zeros_like(y))
    return x, labels, keras.ops.cast(real, "float32")
