"""`FusedAdam` updates as Keras's `Adam` does, with fewer ops, and saves and falls back."""

import contextlib

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.models.schedules import WarmupInverseSqrt


def _run(optimizer_class, steps=6, strategy=None, **options):
    """Weights after `steps` traced updates of two dense matrices and an embedding-like
    table (whose gradient comes as IndexedSlices); returns the step function too."""
    keras.utils.set_random_seed(3)
    with strategy.scope() if strategy else contextlib.nullcontext():
        weights = [keras.Variable(np.random.normal(size=shape).astype("float32"))
                   for shape in ((4, 3), (3, 3), (6, 3))]
        optimizer = optimizer_class(WarmupInverseSqrt(0.05, 3), beta_1=0.9, beta_2=0.98,
                                    epsilon=1e-9, **options)
        optimizer.build(weights)
    dense, square, table = weights
    rows = tf.constant([1, 4, 4])

    def update(x):
        with tf.GradientTape() as tape:
            hidden = tf.tanh(x @ dense) @ square
            loss = tf.reduce_sum(hidden * tf.gather(table, rows))
        grads = tape.gradient(loss, weights)
        optimizer.apply_gradients(zip(grads, weights))
        return isinstance(grads[2], tf.IndexedSlices)

    step = tf.function(lambda x: strategy.run(update, (x,)) if strategy else update(x))
    for _ in range(steps):
        assert step(tf.constant(np.random.normal(size=(3, 4)).astype("float32")))
    return step, [w.numpy() for w in weights]


def _assert_same(fused, reference):
    for a, b in zip(fused, reference):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("clipnorm", [None, 1.0])
def test_updates_equal_keras_adam(clipnorm):
    reference = _run(keras.optimizers.Adam, clipnorm=clipnorm)[1]
    _assert_same(_run(kseq.models.FusedAdam, clipnorm=clipnorm)[1], reference)
    assert not np.allclose(reference[0], _run(keras.optimizers.Adam, steps=5)[1][0])


def test_the_traced_update_has_far_fewer_ops():
    def ops_in_step(optimizer_class):
        step, _ = _run(optimizer_class, steps=1)
        graph = step.get_concrete_function(tf.TensorSpec([3, 4], tf.float32)).graph
        return len(graph.get_operations())

    fused, keras_ops = ops_in_step(kseq.models.FusedAdam), ops_in_step(keras.optimizers.Adam)
    assert fused < 0.8 * keras_ops, (fused, keras_ops)


def test_amsgrad_and_strategies_use_keras_update_and_the_config_round_trips():
    _assert_same(_run(kseq.models.FusedAdam, amsgrad=True)[1],
                 _run(keras.optimizers.Adam, amsgrad=True)[1])
    one_device = tf.distribute.OneDeviceStrategy("/cpu:0")
    _assert_same(_run(kseq.models.FusedAdam, strategy=one_device)[1],
                 _run(keras.optimizers.Adam)[1])
    optimizer = kseq.models.FusedAdam(WarmupInverseSqrt(0.05, 3), beta_2=0.98, clipnorm=1.0)
    again = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(again) is kseq.models.FusedAdam
    assert (again.beta_2, again.clipnorm) == (0.98, 1.0)
