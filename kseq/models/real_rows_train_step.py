"""A train step that runs the output projection on real target rows only.

The `[B, T, V]` projection is most of a translator's training work (E 256,
V 15,000: 23 of the 32 MFLOP per target token of a 1+1-layer Transformer), and
rows whose label is padding add nothing to the masked loss, so they are dropped
before it. Loss, metrics and gradients are those of Keras's step (tested).
"""

import keras
import tensorflow as tf  # GradientTape, boolean_mask and the distribution strategy

from kseq.metrics.masked_cross_entropy import MaskedSparseCrossEntropy

INPUT_NAMES = {"source_ids", "decoder_ids"}


def real_rows_train_step(model, data):
    """One optimizer step of `model` on `data`; returns the logs, or None where it does not apply.

    `model` provides `decoder_states(source_ids, decoder_ids, training)` `[B, T, D]`
    and `project_states(states)` (float32 logits). None — the caller then runs
    Keras's own step — for a model without those hooks, and wherever this step
    could change a result: a loss other than `MaskedSparseCrossEntropy`, sample
    weights, inputs not given as the `{"source_ids", "decoder_ids"}` dict, or
    `jit_compile` (XLA needs static shapes).
    """
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    loss = getattr(model, "loss", None)
    if (not hasattr(model, "decoder_states") or sample_weight is not None
            or model.jit_compile or y is None
            or not isinstance(loss, MaskedSparseCrossEntropy)
            or not isinstance(x, dict) or set(x) != INPUT_NAMES):
        return None
    real = tf.not_equal(y, loss.pad_id)  # [B, T]
    with tf.GradientTape() as tape:
        states = model.decoder_states(x["source_ids"], x["decoder_ids"], training=True)
        logits = model.project_states(tf.boolean_mask(states, real))  # [R, V]
        labels = tf.boolean_mask(y, real)  # [R]
        total = model.compute_loss(x=x, y=labels, y_pred=logits, training=True)
        scaled = model.optimizer.scale_loss(total)
    weights = model.trainable_weights
    model.optimizer.apply_gradients(zip(tape.gradient(scaled, weights), weights))
    _track_loss(model, total, tf.shape(y)[0])
    return model.compute_metrics(x, labels, logits)


def _track_loss(model, total, batch_size):
    """Feeds the "loss" metric as Keras's step does (per replica, unscaled)."""
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    for metric in model.metrics:
        if metric.name == "loss":
            metric.update_state(total * replicas, sample_weight=batch_size)
