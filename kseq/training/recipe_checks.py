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

import json

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError
from kseq.training.distribution import check_strategy
from kseq.training.precision import check_precision
from kseq.models.recipe_values import (MAX_LENGTH, check_model_section,  # noqa: F401
                                       check_sections)

_TRAINING_COUNTS = ("epochs", "batch_size", "token_budget", "warmup_steps", "bleu_subset",
                    "validation_subset", "seed", "vocabulary_sample", "shuffle_window")
# bleu_subset / validation_subset 0: no validation score each epoch (faster epochs)
_MAY_BE_ZERO = ("seed", "bleu_subset", "validation_subset")


def check_recipe(recipe):
    """Raises `KseqError` for the first bad value; returns None when all are fine."""
    check_sections(recipe)
    _check_known(recipe, RECIPE_KEYS, "")
    if "data" in recipe and not isinstance(recipe["data"].get("builder"), str):
        raise KseqError("`data.builder` must name a data builder (e.g. \"numbers\"). "
                        f"Received: data={recipe['data']!r}")
    check_model_section(recipe.get("model", {}))
    _check_training(recipe.get("training", {}))
    if "fine_tuning" in recipe:  # `kseq.training.fine_tuning`: what a run from a model uses
        check_fine_tuning(recipe["fine_tuning"])
    max_size = recipe.get("tokenizer", {}).get("max_size")
    check_int("tokenizer.max_size", max_size, minimum=5, allow_none=True)


# Every key a recipe's training section may hold (`kseq.training.run`, the tasks' compile
# and validation settings): another is a typo, refused with the close names.
TRAINING_KEYS = ("epochs", "batch_size", "token_budget", "boundaries", "peak_learning_rate",
                 "warmup_steps", "clipnorm", "label_smoothing", "jit_compile", "precision",
                 "strategy", "seed", "bleu_subset", "validation_subset", "class_weight",
                 "vocabulary_sample", "shuffle_window", "data_service")
# The `fine_tuning` section (`kseq.training.fine_tuning`: what a run from a model uses).
SCHEDULE_KEYS = ("peak_learning_rate", "warmup_steps", "epochs")
FINE_TUNING_KEYS = SCHEDULE_KEYS + ("keep_best", "freeze", "keep_original",
                                    "extend_vocabulary", "from")
FREEZE_CHOICES = ("encoder", "embeddings", "backbone")
RECIPE_KEYS = ("task", "description", "domain", "sources", "data", "tokenizer", "model",
               "training", "weights", "fine_tuning")


def _check_known(keys, known, where):
    import difflib

    for key in keys:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else \
                f"; known keys: {', '.join(known)}"
            raise KseqError(f"Unknown recipe key `{where}{key}`{hint} Received: "
                            f"{where}{key}")


def _check_training(training):
    _check_known(training, TRAINING_KEYS, "training.")
    for key in _TRAINING_COUNTS:
        if key in training:
            check_int(f"training.{key}", training[key], minimum=0 if key in _MAY_BE_ZERO else 1,
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
    _check_devices(training)
    _check_data_service(training)
    if "boundaries" in training:  # null too: the run reads the list as given
        boundaries = training["boundaries"]
        if not isinstance(boundaries, list) or not boundaries:
            raise KseqError("`training.boundaries` must be a non-empty list of lengths. "
                            f"Received: training.boundaries={boundaries!r}")
        for index, value in enumerate(boundaries):
            check_int(f"training.boundaries[{index}]", value, maximum=MAX_LENGTH)


def _check_data_service(training):
    """`training.data_service`: a dispatcher's grpc://HOST:PORT, for a one-process run."""
    if training.get("data_service") is None:
        return
    from kseq.training.data_service import check_address

    check_address(training["data_service"])
    if training.get("strategy") == "multi-worker":
        raise KseqError("A run reads from a data service or trains on several workers, not "
                        "both (each worker would need its own consumer index). Received: "
                        f"training.data_service={training['data_service']!r}, "
                        "training.strategy='multi-worker'")


def _check_devices(training):
    """The strategy, precision and XLA switch (`kseq.training.distribution`, `.precision`)."""
    if "strategy" in training:
        check_strategy(training["strategy"])
    if "precision" in training:
        check_precision(training["precision"])
    if not isinstance(training.get("jit_compile", False), bool):
        raise KseqError("`training.jit_compile` must be true or false. "
                        f"Received: training.jit_compile={training['jit_compile']!r}")


# What a trained model was built from: a continued or resumed run cannot change them.
_MODEL_SECTIONS = ("task", "model", "tokenizer")


def _difference(before, now, path):
    """`(dotted path, before, now)` of the first value that differs, or None."""
    if isinstance(before, dict) and isinstance(now, dict):
        for key in sorted(set(before) | set(now), key=str):
            found = _difference(before.get(key), now.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    return None if before == now else (path, before, now)


def _with_named_parts(model):
    """A translator's `model` section with an architecture name read as its pair of parts."""
    from kseq.models.translator import Translator  # TensorFlow only when a run continues

    if not isinstance(model, dict) or model.get("arch") not in Translator.architecture_parts:
        return model
    named = {key: value for key, value in model.items() if key != "arch"}
    encoder, decoder = Translator.architecture_parts[model["arch"]]
    return {**named, "encoder": named.get("encoder", encoder),
            "decoder": named.get("decoder", decoder)}


def check_continuation(previous, recipe, folder):
    """Refuses `recipe` when its task, model or tokenizer differs from `previous`, the
    `recipe.json` of a run folder that already holds a trained model or checkpoints.

    Such a run goes on with the model it finds (its parts and vocabulary), so the
    change could not apply, and `recipe.json` must not claim it did. The `training`
    section may change: a continued run compiles with it (learning rate, warm-up,
    clipping, label smoothing) and batches with it.
    """
    if not previous:
        return
    for section in _MODEL_SECTIONS:  # compared as recipe.json holds them (tuples as lists)
        before, now = previous.get(section), json.loads(json.dumps(recipe.get(section)))
        if section == "task":
            before, now = before or "translator", now or "translator"
        if section == "model":  # a run recorded with `arch` and a recipe naming its parts agree
            before, now = _with_named_parts(before), _with_named_parts(now)
        found = _difference(before, now, section)
        if found:
            path, before, now = found
            raise KseqError(f"{folder} holds a model built with {path}={before!r}; a continued "
                            f"run keeps its model's task, model and tokenizer settings, so keep "
                            f"that value or train into a new --output. Received: {path}={now!r}")


def check_fine_tuning(section):
    """Checks a recipe's `fine_tuning` section."""
    if not isinstance(section, dict):
        raise KseqError(f"`fine_tuning` must be a section (a JSON object). Received: "
                        f"fine_tuning={section!r}")
    _check_known(section, FINE_TUNING_KEYS, "fine_tuning.")
    for key in ("warmup_steps", "epochs"):
        if key in section:
            check_int(f"fine_tuning.{key}", section[key])
    if "peak_learning_rate" in section:
        check_float("fine_tuning.peak_learning_rate", section["peak_learning_rate"],
                    minimum=0.0, exclusive_minimum=True)
    check_float("fine_tuning.keep_original", section.get("keep_original", 0.0), minimum=0.0,
                maximum=1.0)
    if section.get("freeze") not in (None,) + FREEZE_CHOICES:
        raise KseqError(f"`fine_tuning.freeze` must be one of {', '.join(FREEZE_CHOICES)} or "
                        f"null. Received: fine_tuning.freeze={section['freeze']!r}")
    for key, default in (("keep_best", True), ("extend_vocabulary", False)):
        if not isinstance(section.get(key, default), bool):
            raise KseqError(f"`fine_tuning.{key}` must be true or false. Received: "
                            f"fine_tuning.{key}={section[key]!r}")
