"""The checks of a recipe's sections and model values that a model builder needs too
(`kseq.zoo` checks what it builds; `kseq.training.recipe_checks` adds the training ones).

Example:
>>> check_model_section({"hidden_dim": 32, "max_source_length": 64})
>>> check_model_section({"max_source_length": 0})
Traceback (most recent call last):
...
kseq.errors.KseqError: `model.max_source_length` must be an integer >= 1 and <= 65536. Received: model.max_source_length=0
"""

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError

# Model hyper-parameters that count something: all must be integers >= 1.
_MODEL_COUNTS = ("num_layers", "num_heads", "hidden_dim", "intermediate_dim", "units",
                 "embedding_dim", "num_encoder_layers", "num_decoder_layers", "kernel_size")
# Lengths in tokens size position tables and padded batches: 2e9 passed the count check and
# ended in an out-of-memory error at the first step.
_MODEL_LENGTHS = ("max_source_length", "max_target_length", "max_length")
MAX_LENGTH = 65536
_MODEL_RATES = ("dropout", "embedding_dropout", "activation_dropout")
_MAY_BE_NULL = ("embedding_dropout", "activation_dropout")  # null: the `dropout` rate


def check_sections(recipe, what="A recipe"):
    """`recipe` (a recipe, or overrides before they are merged into one) must be a dict
    whose `model`, `training`, `tokenizer` and `data` sections are dicts.

    Overrides are checked before the merge: a task's merge reads their sections
    (`--set model=3` ended in a TypeError inside `Translator.merged_recipe`).
    """
    if not isinstance(recipe, dict):
        raise KseqError(f"{what} must be a JSON object. Received: {type(recipe).__name__} "
                        f"{str(recipe)[:80]}")
    for section in ("model", "training", "tokenizer", "data"):
        if not isinstance(recipe.get(section, {}), dict):
            raise KseqError(f"`{section}` must be a JSON object of settings (e.g. --set "
                            f"{section}.KEY=VALUE). Received: {section}={recipe[section]!r}")


def check_model_section(model):
    """Raises `KseqError` for the first bad value of a recipe's `model` section."""
    for key in _MODEL_COUNTS:
        if key in model:
            check_int(f"model.{key}", model[key])
    for key in _MODEL_LENGTHS:
        if key in model:
            check_int(f"model.{key}", model[key], maximum=MAX_LENGTH)
    for key in _MODEL_RATES:
        if key in model:
            check_float(f"model.{key}", model[key], minimum=0.0, maximum=0.99,
                        allow_none=key in _MAY_BE_NULL)
