"""Tripwire for `kseq.training.multi_worker_workaround` (keras-team/keras#20585).

The workaround replaces Keras's private `Model._maybe_symbolic_build` on one
model instance and reshapes `train_step`'s logs. These tests fail loudly when
Keras changes what it relies on: the method's name or arguments, `fit` no
longer going through it, or a strategy's `axis=0` mean no longer turning a
shape-[1] log into a scalar. (That the workaround makes two real workers train
is `test_multi_worker_training.py`; when Keras fixes #20585, delete the module.)
"""

import inspect

import keras
import numpy as np
import pytest
import tensorflow as tf

from kseq.training import multi_worker_workaround as workaround

TRIPWIRE = (f"Keras changed underneath kseq.training.multi_worker_workaround "
            f"({workaround.UPSTREAM_ISSUE}); check whether the bug is fixed, and update or "
            f"remove the workaround")


def _tiny_model():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    model.optimizer.build(model.trainable_variables)
    return model


def test_keras_still_has_the_private_method_with_its_arguments():
    method = getattr(keras.Model, workaround.SYMBOLIC_BUILD, None)
    assert method is not None, TRIPWIRE
    parameters = tuple(inspect.signature(method).parameters)[1:]
    assert parameters == workaround.SYMBOLIC_BUILD_ARGUMENTS, (TRIPWIRE, parameters)


def test_fit_goes_through_the_replaced_method_and_step(monkeypatch):
    model = workaround.patch_for_multi_worker(_tiny_model())
    calls = []
    replaced = getattr(model, workaround.SYMBOLIC_BUILD)
    object.__setattr__(model, workaround.SYMBOLIC_BUILD,
                       lambda **kw: calls.append(sorted(kw)) or replaced(**kw))
    history = model.fit(np.ones((4, 2)), np.ones((4, 1)), batch_size=2, epochs=1, verbose=0)
    assert calls and set(calls[0]) <= set(workaround.SYMBOLIC_BUILD_ARGUMENTS), (TRIPWIRE, calls)
    assert np.size(history.history["loss"][0]) == 1  # the shape-[1] log arrives as one value
    assert int(model.optimizer.iterations.numpy()) == 2


def test_a_strategy_mean_over_axis_0_turns_a_shape_one_log_into_a_scalar():
    reduced = tf.distribute.get_strategy().reduce("MEAN", tf.constant([2.5]), axis=0)
    assert reduced.shape == () and float(reduced) == 2.5, TRIPWIRE


def test_only_built_models_are_patched_and_others_stay_untouched():
    unbuilt = keras.Sequential([keras.layers.Dense(1)])
    unbuilt.compile("sgd", "mse")
    with pytest.raises(ValueError, match="20585"):
        workaround.patch_for_multi_worker(unbuilt)
    patched, plain = workaround.patch_for_multi_worker(_tiny_model()), _tiny_model()
    assert workaround.SYMBOLIC_BUILD in vars(patched)
    assert workaround.SYMBOLIC_BUILD not in vars(plain) and "train_step" not in vars(plain)
