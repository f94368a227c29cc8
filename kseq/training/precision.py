"""Training precision: the dtype policy a run builds its model under, and float32 copies.

A precision is a training option, not a property of the trained model: a run
builds its model under the recipe's `training.precision` (`float32`,
`mixed_bfloat16` or `mixed_float16`: variables in float32, compute in the
16-bit type; Keras wraps the optimizer in a `LossScaleOptimizer` for
`mixed_float16` when it compiles), while `model_config.json` and `model.keras`
are written in float32, so a trained model loads and decodes in float32 on any
machine. The global Keras policy is set only while a model is built and
restored afterwards.

Example:
>>> import keras
>>> from kseq.training.precision import config_at_precision, precision_scope
>>> with precision_scope("mixed_bfloat16"):
...     layer = keras.layers.Dense(2)
>>> layer.dtype_policy.name, keras.config.dtype_policy().name
('mixed_bfloat16', 'float32')
>>> config = keras.saving.serialize_keras_object(layer)
>>> keras.saving.deserialize_keras_object(config_at_precision(config, "float32")).dtype_policy.name
'float32'
"""

import contextlib
import copy

import keras

from kseq.errors import KseqError
from kseq.training.checkpoints import optimizer_state, restore_optimizer_state

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
# Dtype policies a precision change rewrites; integer or pure 16-bit policies stay.
_FLOAT_POLICIES = frozenset(PRECISIONS)


def check_precision(precision, name="training.precision"):
    """`precision` if it is one of `PRECISIONS`, else a `KseqError` naming `name`."""
    if precision not in PRECISIONS:
        raise KseqError(f"`{name}` must be one of {', '.join(PRECISIONS)}. "
                        f"Received: {name}={precision!r}")
    return precision


@contextlib.contextmanager
def precision_scope(precision):
    """Layers created inside take the `precision` policy; the previous global policy
    comes back on exit (also after an error)."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(check_precision(precision, "precision"))
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def _rewrite(value, precision):
    """The dtype policies in a serialized object, rewritten in place."""
    if isinstance(value, dict):
        if value.get("class_name") in ("DTypePolicy", "FloatDTypePolicy") and \
                value.get("config", {}).get("name") in _FLOAT_POLICIES:
            value["config"]["name"] = precision
            return value
        for key, item in value.items():
            if key == "dtype" and isinstance(item, str) and item in _FLOAT_POLICIES:
                value[key] = precision  # a policy serialized by its name
            else:
                _rewrite(item, precision)
    elif isinstance(value, list):
        for item in value:
            _rewrite(item, precision)
    return value


def config_at_precision(config, precision):
    """A copy of a serialized Keras object with every float policy set to `precision`.

    kseq's models set no layer's policy apart from its part's (logits are cast
    to float32 in code), so rewriting them all is a lossless precision change.
    """
    return _rewrite(copy.deepcopy(config), check_precision(precision, "precision"))


def model_precision(model):
    """The precision a model computes in (its own dtype policy's name)."""
    return model.dtype_policy.name


def rebuilt_at_precision(model, precision, training):
    """A copy of a compiled task `model` computing in `precision`, with the same weights and
    optimizer state (step counter, moments; in and out of a `LossScaleOptimizer`'s inner
    optimizer); a loss scale starts afresh.

    Built under the current distribution strategy scope, as `model` was.
    """
    if model_precision(model) == precision:
        return model
    config = config_at_precision(keras.saving.serialize_keras_object(model), precision)
    with precision_scope(precision):  # the model's own policy and its inputs' are not in
        copied = keras.saving.deserialize_keras_object(config)  # `config`: the global one
    copied.compile_from_recipe(training)  # mixed_float16: a LossScaleOptimizer
    if hasattr(model, "recipe"):  # a preset's or a run's recipe travels with the model
        copied.recipe = model.recipe
    copied.set_weights(model.get_weights())
    state = optimizer_state(model.optimizer)
    if state is not None:
        restore_optimizer_state(copied, state, type(model.optimizer).__name__)
    return copied
