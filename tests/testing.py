"""Shared test helpers: most layer tests are then short tables."""

import json
import os
import tempfile

import keras
import numpy as np


def _as_list(inputs):
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


class LayerModel(keras.Model):
    """Wraps one layer so `fit` can train it on positional tensor inputs."""

    def __init__(self, layer, call_kwargs):
        super().__init__(name="layer_model")
        self.layer = layer
        self.call_kwargs = call_kwargs

    def call(self, inputs, training=None):
        return self.layer(*_as_list(inputs), training=training, **self.call_kwargs)


def config_round_trip(layer):
    """get_config -> JSON -> from_config gives the same config."""
    config = layer.get_config()
    rebuilt = layer.__class__.from_config(json.loads(json.dumps(config)))
    assert rebuilt.get_config() == config
    return rebuilt


def run_layer_test(
    layer_cls,
    init_kwargs,
    inputs,
    expected_output_shape,
    call_kwargs=None,
    run_training=True,
    run_mixed_precision=True,
):
    """Config round trip, symbolic and eager calls, fit steps (XLA off/on), bfloat16.

    `inputs` is one array or a list of arrays passed positionally;
    `call_kwargs` holds extra keyword inputs (masks, flags).
    """
    call_kwargs = call_kwargs or {}
    arrays = _as_list(inputs)
    layer = layer_cls(**init_kwargs)
    config_round_trip(layer)

    eager = layer(*arrays, **call_kwargs)
    assert tuple(eager.shape) == tuple(expected_output_shape)
    assert np.all(np.isfinite(keras.ops.convert_to_numpy(eager)))

    symbolic_inputs = [keras.Input(shape=a.shape[1:], dtype=a.dtype) for a in arrays]
    symbolic = layer_cls(**init_kwargs)(*symbolic_inputs, **call_kwargs) if not call_kwargs else None
    if symbolic is not None:
        assert tuple(symbolic.shape[1:]) == tuple(expected_output_shape[1:])

    if run_training:
        target = np.random.default_rng(0).normal(size=expected_output_shape).astype("float32")
        for jit in (False, True):
            model = LayerModel(layer_cls(**init_kwargs), call_kwargs)
            model.compile(optimizer="adam", loss="mse", jit_compile=jit)
            history = model.fit(
                tuple(arrays) if len(arrays) > 1 else arrays[0], target,
                epochs=1, batch_size=len(target), verbose=0,
            )
            assert np.isfinite(history.history["loss"][0])

    if run_mixed_precision:
        layer16 = layer_cls(**init_kwargs, dtype="mixed_bfloat16")
        out16 = layer16(*arrays, **call_kwargs)
        assert keras.backend.standardize_dtype(out16.dtype) == "bfloat16"
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(keras.ops.cast(out16, "float32"))))
    return layer


def run_model_saving_test(model, inputs, atol=1e-6):
    """`.keras` save -> load -> the same outputs. Returns the reloaded model."""
    expected = keras.ops.convert_to_numpy(model(inputs))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        restored = keras.saving.load_model(path)
    actual = keras.ops.convert_to_numpy(restored(inputs))
    np.testing.assert_allclose(actual, expected, atol=atol)
    return restored
