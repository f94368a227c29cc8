"""Validation of a recipe's numbers before anything is built or written.

A recipe is data (JSON), so a typo such as `"batch_size": -4` or
`"max_source_length": 0` would otherwise surface as a shape error deep inside
TensorFlow after minutes of vocabulary building. Each bad value gives one line
naming its place in the recipe (`training.batch_size`).

Example:
>>> from kseq.training.recipe_checks import check_recipe
>>> check_recipe({"model": {"hidden_dim": 32}, "training": {"batch_size": 8}})
>>> check_recipe({"training": {"batch_size": -4}})
Traceback (most recent call last):
...
kseq.errors.KseqError: `training.batch_size` must be an integer >= 1 or None. Received: training.batch_size=-4
"""

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError

# Model hyper-parameters that count something: all must be integers >= 1.
_MODEL_COUNTS = ("num_layers", "num_heads", "hidden_dim", "intermediate_dim",
                 "max_source_length", "max_target_length", "units", "embedding_dim",
                 "num_encoder_layers", "num_decoder_layers", "kernel_size")
_MODEL_RATES = ("dropout", "embedding_dropout", "activation_dropout")
_TRAINING_COUNTS = ("epochs", "batch_size", "token_budget", "warmup_steps", "bleu_subset",
                    "seed")


def check_recipe(recipe):
    """Raises `KseqError` for the first bad value; returns None when all are fine."""
    if not isinstance(recipe, dict):
        raise KseqError(f"A recipe must be a JSON object. Received: {type(recipe).__name__}")
    for section in ("model", "training", "tokenizer", "data"):
        if not isinstance(recipe.get(section, {}), dict):
            raise KseqError(f"`{section}` must be a JSON object. "
                            f"Received: {section}={recipe[section]!r}")
    if "data" in recipe and not isinstance(recipe["data"].get("builder"), str):
        raise KseqError("`data.builder` must name a data builder (e.g. \"numbers\"). "
                        f"Received: data={recipe['data']!r}")
    _check_model(recipe.get("model", {}))
    _check_training(recipe.get("training", {}))
    max_size = recipe.get("tokenizer", {}).get("max_size")
    check_int("tokenizer.max_size", max_size, minimum=5, allow_none=True)


def _check_model(model):
    for key in _MODEL_COUNTS:
        if key in model:
            check_int(f"model.{key}", model[key])
    for key in _MODEL_RATES:
        if model.get(key) is not None:
            check_float(f"model.{key}", model[key], minimum=0.0, maximum=0.99)


def _check_training(training):
    for key in _TRAINING_COUNTS:
        if key in training:
            check_int(f"training.{key}", training[key], minimum=0 if key == "seed" else 1,
                      allow_none=key in ("batch_size", "token_budget"))
    if training.get("batch_size") is not None and training.get("token_budget") is not None:
        raise KseqError("Give `training.batch_size` or `training.token_budget`, not both. "
                        f"Received: batch_size={training['batch_size']}, "
                        f"token_budget={training['token_budget']}")
    if "peak_learning_rate" in training:
        check_float("training.peak_learning_rate", training["peak_learning_rate"], minimum=0.0,
                    exclusive_minimum=True)
    check_float("training.clipnorm", training.get("clipnorm"), minimum=0.0,
                exclusive_minimum=True, allow_none=True)  # null turns clipping off
    if "label_smoothing" in training:
        check_float("training.label_smoothing", training["label_smoothing"], minimum=0.0,
                    maximum=0.99)
    boundaries = training.get("boundaries")
    if boundaries is not None:
        if not isinstance(boundaries, list) or not boundaries:
            raise KseqError("`training.boundaries` must be a non-empty list of lengths. "
                            f"Received: training.boundaries={boundaries!r}")
        for index, value in enumerate(boundaries):
            check_int(f"training.boundaries[{index}]", value)
