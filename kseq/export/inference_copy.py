"""A model without its training state, for the files that serve it.

A compiled Keras model tracks `model.optimizer`, so anything that saves the
model's object graph (a SavedModel through `tf.saved_model.save`, a `.keras`
file) also saves the optimizer's variables: Adam's two slots per weight (the
export of a 100,000-bucket × 128 classifier grows from 52 MB to 154 MB), the
iteration count, a loss-scale optimizer's scale. `without_optimizer` rebuilds
the model from its config and copies its weights: the same predictions, no
optimizer, no compile config. The export path (`kseq.export`) serves from
`inference_model(model)`; a preset's shipped `.keras` file
(`tools/preset_weights.py`) is written from `without_optimizer(model)`.
`model.keras` written by `kseq train` keeps its optimizer (continuing a run
needs it).

Example:
>>> import kseq
>>> model = kseq.models.SequenceTagger.from_recipe(
...     {"task": "tagger", "model": {"encoder": "rnn", "hidden_dim": 8}}, [("the dog", "D N")])
>>> copy = inference_model(model)
>>> type(model.optimizer).__name__, getattr(copy, "optimizer", None)
('FusedAdam', None)
>>> len(copy.weights) == len(model.weights)
True
"""


def without_optimizer(model):
    """The same model and weights, uncompiled: a new model built from `model`'s config,
    holding no optimizer state and no compile config."""
    copy = type(model).from_config(model.get_config())
    copy.set_weights(model.get_weights())
    return copy


def inference_model(model):
    """`model` itself when it holds no optimizer, else `without_optimizer(model)`."""
    if getattr(model, "optimizer", None) is None:
        return model
    return without_optimizer(model)
