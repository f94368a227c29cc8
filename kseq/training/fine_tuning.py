"""Fine-tuning: a run that starts from a trained model (`kseq train --from SOURCE`).

A source is a preset that ships weights, a run folder holding `model.keras`, or a
`.keras` file. The run keeps the source's weights, vocabulary, tokenizer and labels
(its task, model and tokenizer sections), and trains with a fresh optimizer on a
fine-tuning schedule: the recipe's training section overlaid with `FINE_TUNING`
(per task: a lower peak learning rate, never above the recipe's own, a short warm-up, few
epochs), then with the
recipe's own `fine_tuning` section, then with the command's overrides. Validation
runs every epoch and the best epoch's weights are kept (`keep_best`).

The `fine_tuning` section (all optional; `kseq.training.recipe_checks` checks it):

- `peak_learning_rate`, `warmup_steps`, `epochs`: the schedule (they replace the
  training section's values);
- `keep_best` (true): end with the weights of the epoch with the best validation score;
- `freeze`: `"encoder"`, `"embeddings"` or `"backbone"` (every layer but a classifier's
  or tagger's head): those weights stay as the source's;
- `keep_original` (0.0): the saved weights are `keep_original · source + (1 −
  keep_original) · fine-tuned` (a weight-space average, WiSE-FT), which keeps more of
  the source's own domain;
- `extend_vocabulary` (false): add the data's unknown tokens seen at least twice (at most
  2,000 a side, most frequent first) to a word or character vocabulary, with new rows
  (`kseq.models.vocabulary_extension`; old ids keep theirs);
- `from`: recorded by the run (the source it started from).

Before training, one line says which share of the data's tokens the source's vocabulary
maps to `<unk>` (a warning above 5%).

A classifier or tagger given data with labels its source does not have keeps its
encoder and gets a new head for the data's labels (sorted); the same labels (or a
subset) keep the head. The saved `model.keras` is float32 without optimizer state
(the checkpoints hold it).

Example:
>>> fine_tuning_training({"epochs": 100, "peak_learning_rate": 0.003}, "classifier", {},
...                      {})["peak_learning_rate"]
0.002
"""

import json
import os

import keras
import numpy as np

from kseq.training.recipe_checks import SCHEDULE_KEYS
from kseq.errors import KseqError

# Per task: what replaces the training section's schedule (then the recipe's own
# `fine_tuning` section, then the command's overrides, win).
FINE_TUNING = {
    "translator": {"peak_learning_rate": 5e-4, "warmup_steps": 30, "epochs": 8},
    "captioner": {"peak_learning_rate": 5e-4, "warmup_steps": 30, "epochs": 8},
    "language_model": {"peak_learning_rate": 5e-4, "warmup_steps": 30, "epochs": 8},
    "classifier": {"peak_learning_rate": 2e-3, "warmup_steps": 20, "epochs": 6},
    "tagger": {"peak_learning_rate": 2e-3, "warmup_steps": 20, "epochs": 6},
}
UNKNOWN_WARNING = 0.05  # a larger share of `<unk>` tokens in the data is warned about
EXTEND_LIMIT, EXTEND_MIN_COUNT = 2000, 2  # `extend_vocabulary`: tokens seen at least twice
_LABEL_KEYS = ("label_names", "tag_names")  # a preprocessor's classes, if it has them


class Source:
    """A model to fine-tune: `model` (float32, compiled), `recipe` (task, model and
    tokenizer sections), `name` (as given), `task` and the `card_slice` pairs of a
    preset that commits one (else None)."""

    def __init__(self, model, recipe, name, card_slice=None):
        self.model, self.recipe, self.name, self.card_slice = model, recipe, name, card_slice
        self.task = type(model).preset_task
        self.weights = None  # its weights (numpy), read when a run starts from it


def load_source(spec, load_trained):
    """The `Source` named by `--from spec`; `KseqError` when it names no trained model.
    `load_trained(path)` loads a run folder or `.keras` file (`kseq.training.run`'s, which
    imports this module)."""
    from kseq.presets.catalog import has_weights, is_preset, load_preset_model, preset_recipe, \
        slice_pairs

    spec = os.fspath(spec)
    if not os.path.exists(spec) and is_preset(spec):
        if not has_weights(spec):
            raise KseqError(f"The preset {spec!r} ships no trained weights to fine-tune; "
                            f"train it with `kseq train {spec} --output DIR`, then fine-tune "
                            f"DIR. Received: --from {spec}")
        model = load_preset_model(spec)
        card = preset_recipe(spec)["weights"].get("slice_200")
        return Source(model, _plain(model.recipe), spec, slice_pairs(spec) if card else None)
    if os.path.isdir(spec) or spec.endswith(".keras"):
        if not os.path.exists(spec):
            raise KseqError(f"No such model file to fine-tune. Received: --from {spec}")
        model = load_trained(spec)
        folder = spec if os.path.isdir(spec) else os.path.dirname(os.path.abspath(spec))
        recipe = _recorded_recipe(folder) or _plain(getattr(model, "recipe", None) or {})
        recipe["task"] = type(model).preset_task
        recipe.pop("fine_tuning", None)  # how the source was made, not how to fine-tune it
        return Source(model.compile_from_recipe(recipe.get("training", {})), recipe, spec)
    raise KseqError(f"--from takes a preset that ships weights, a run folder holding "
                    f"model.keras, or a .keras file. Received: --from {spec}")


def _plain(recipe):
    """A recipe as plain JSON values (a model's attribute is a Keras-tracked dict)."""
    return json.loads(json.dumps(recipe, default=list))


def _recorded_recipe(folder):
    path = os.path.join(folder, "recipe.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        raise KseqError(f"{path} is unreadable ({error}). Received: {path}") from None


def _without_labels(model_section):
    """A model section without its class lists: the data's labels decide the head."""
    return {k: v for k, v in (model_section or {}).items() if k not in _LABEL_KEYS}


def check_recipe_fits(source, recipe, recipe_name):
    """Refuses a recipe given with `--from` whose task, model or tokenizer section differs
    from the source's (the run keeps the source's): one line naming the first value."""
    from kseq.training.recipe_checks import _difference, _with_named_parts

    task, wanted = source.task, recipe.get("task", "translator")
    if wanted != task:
        raise KseqError(f"--from {source.name} is a {task}; the recipe {recipe_name} is a "
                        f"{wanted}: give a {task} recipe, or none (the source's own is used). "
                        f"Received: task={wanted!r}")
    for section in ("model", "tokenizer"):
        mine, theirs = recipe.get(section), source.recipe.get(section)
        if section == "model":
            mine, theirs = _with_named_parts(_without_labels(mine)), \
                _with_named_parts(_without_labels(theirs))
        if not theirs:  # a bare .keras file records no recipe: its model is what it is
            continue
        found = _difference(json.loads(json.dumps(theirs)), json.loads(json.dumps(mine or {})),
                            section)
        if found:
            path, before, now = found
            raise KseqError(f"--from {source.name} was built with {path}={before!r}; a "
                            f"fine-tuning run keeps the source's model and tokenizer, so give a "
                            f"recipe of the same shape, or none (the source's own is used). "
                            f"Received: {path}={now!r}")


def fine_tuning_training(training, task, fine_tuning, overrides):
    """The run's training section: `training` with the task's `FINE_TUNING` schedule, the
    recipe's `fine_tuning` schedule and the overrides' training section on top."""
    schedule = {k: v for k, v in (fine_tuning or {}).items() if k in SCHEDULE_KEYS}
    batching = {} if training.get("batch_size") or training.get("token_budget") else \
        {"batch_size": 32}  # a bare .keras file records no recipe
    defaults = dict(FINE_TUNING.get(task, FINE_TUNING["translator"]))
    if "peak_learning_rate" in training:  # never above the source recipe's own peak
        defaults["peak_learning_rate"] = min(defaults["peak_learning_rate"],
                                             training["peak_learning_rate"])
    return {**training, **batching, **defaults, **schedule,
            **((overrides or {}).get("training") or {})}


def fine_tuning_recipe(source, recipe, overrides, options):
    """The recipe a run from `source` records: `recipe` (the source's own, or one given
    with `--from`, of the same task and shape) with the source's model and tokenizer
    sections (class lists left out), the fine-tuning training section and a
    `fine_tuning` section naming the source and its settings."""
    from kseq.models.recipes import merge

    for section in ("model", "tokenizer"):  # the source's parts cannot change
        for key, value in ((overrides or {}).get(section) or {}).items():
            if key not in _LABEL_KEYS and (source.recipe.get(section) or {}).get(key) != value:
                raise KseqError(f"A fine-tuning run keeps the model and tokenizer of --from "
                                f"{source.name}; {section}.{key} cannot change. Received: "
                                f"{section}.{key}={value!r}")
    merged = merge(recipe, overrides, options)
    fine_tuning = {**{"keep_best": True, "keep_original": 0.0},
                   **(merged.get("fine_tuning") or {}), "from": source.name}
    training = fine_tuning_training(recipe.get("training", {}), source.task, fine_tuning,
                                    merge(overrides or {}, options))
    fine_tuning.update({k: training[k] for k in SCHEDULE_KEYS})
    run_recipe = {k: v for k, v in merged.items() if k not in ("weights",)}
    run_recipe.update(task=source.task, training=training, fine_tuning=fine_tuning)
    for section in ("model", "tokenizer"):
        if source.recipe.get(section) is not None:
            run_recipe[section] = source.recipe[section]
    run_recipe["model"] = _without_labels(run_recipe.get("model"))
    return run_recipe


# === The model a fine-tuning run starts with ===

def class_names(model):
    """The classes of a classifier or tagger (`label_names` / `tag_names`), else None."""
    config = model.preprocessor.get_config()
    for key in _LABEL_KEYS:
        if key in config:
            return list(config[key])
    return None


def data_labels(corpus, task):
    """The labels (classifier) or tags (tagger) of the training split, sorted."""
    if task == "classifier" and corpus.labels is not None:
        return sorted(corpus.labels)
    tags = set()
    for chunk in corpus.chunks("train"):
        tags.update(tag for _, row in chunk for tag in row.split())
    return sorted(tags)


def with_new_head(model, labels):
    """A copy of classifier or tagger `model` whose head answers `labels`: every other
    weight copied, the head newly initialised."""
    config = keras.saving.serialize_keras_object(model)
    preprocessor = config["config"]["preprocessor"]["config"]
    key = next(k for k in _LABEL_KEYS if k in preprocessor)
    preprocessor[key] = list(labels)
    copy = keras.saving.deserialize_keras_object(config)
    for old, new in zip(model.layers, copy.layers):
        if new.name != "head":
            new.set_weights(old.get_weights())
    copy.recipe = getattr(model, "recipe", None)
    return copy


def frozen_layers(model, part):
    """The layers `--freeze part` fixes; `KseqError` when that leaves nothing to train."""
    generative = not hasattr(model, "head")
    if part == "backbone" and generative:
        raise KseqError(f"--freeze backbone would leave a {type(model).preset_task} nothing to "
                        f"train (its decoder is its output layer); freeze the encoder or the "
                        f"embeddings. Received: --freeze {part}")
    layers = [layer for layer in model.layers if layer.weights]
    if part == "encoder":
        return [layer for layer in layers if layer.name.startswith("encoder_")]
    if part == "embeddings":
        return [layer for layer in layers if "embedding" in layer.name]
    return [layer for layer in layers if layer.name != "head"]


def freeze(model, part):
    """Sets `trainable = False` on `frozen_layers(model, part)`; returns their names.
    Call before the optimizer is built (it tracks the trainable variables)."""
    if not part:
        return []
    layers = frozen_layers(model, part)
    for layer in layers:
        layer.trainable = False
    return [layer.name for layer in layers]


def start_model(source, recipe, corpus, precision):
    """`(model, notes)`: the source's model (at `precision`; with a new head for the data's
    labels where they differ), compiled from the run's training section."""
    from kseq.training.precision import config_at_precision, precision_scope

    model, notes = source.model, []
    source.weights = [np.array(w) for w in model.get_weights()]
    unknown = unknown_tokens(model, corpus)
    if unknown:
        _report_coverage(unknown, recipe["fine_tuning"].get("extend_vocabulary", False))
    if recipe["fine_tuning"].get("extend_vocabulary") and unknown:
        model, added = _extended(model, unknown)
        notes.append(f"vocabulary extended by {added} (old ids kept)")
    names = class_names(model)
    if names is not None:
        labels = data_labels(corpus, source.task)
        unknown = [label for label in labels if label not in names]
        if unknown:
            model = with_new_head(model, labels)
            notes.append(f"new head for the data's {len(labels)} labels ({', '.join(labels)}; "
                         f"the source's: {', '.join(names)}), encoder kept")
        else:
            notes.append(f"the source's head and its {len(names)} labels kept")
    if precision != "float32":
        config = config_at_precision(keras.saving.serialize_keras_object(model), precision)
        with precision_scope(precision):
            copy = keras.saving.deserialize_keras_object(config)
        copy.set_weights(model.get_weights())
        model = copy
    model.recipe = recipe
    return model, notes


def unknown_tokens(model, corpus):
    """`{side: (share, [(token, count)])}`: the share of the training sample's tokens that
    `model`'s vocabularies map to `<unk>`, and those tokens, most frequent first."""
    from kseq.models.vocabulary_extension import text_sides, unknown_token_share

    sides = text_sides(model)
    if not sides or corpus.inputs != "text" and sides != ["target"]:
        return {}
    pairs = corpus.sample()
    found = {}
    for side in sides:
        texts = [target if side == "target" else text for text, target in pairs]
        found[side] = unknown_token_share(model, texts, side=side, top=EXTEND_LIMIT)
    return found


def _report_coverage(unknown, extending):
    import logging

    shares = " and ".join(f"{share:.1%} of the data's {side} tokens"
                          for side, (share, _) in unknown.items())
    tokens = [token for _, (_, listed) in unknown.items() for token, _ in listed[:5]]
    line = (f"vocabulary: the source's vocabulary maps {shares} to <unk>"
            + (f" (most common: {', '.join(tokens)})" if tokens else ""))
    if max(share for share, _ in unknown.values()) > UNKNOWN_WARNING:
        hint = "" if extending else \
            "; --extend-vocabulary adds the frequent ones (word and char vocabularies)"
        logging.getLogger("kseq").warning("%s", line + hint)
    else:
        print(line, flush=True)


def _extended(model, unknown):
    """`model` with each side's unknown tokens seen at least `EXTEND_MIN_COUNT` times added;
    `(model, how many were added, in words)`."""
    from kseq.models.vocabulary_extension import extend_vocabulary

    tokens = {side: [token for token, count in listed if count >= EXTEND_MIN_COUNT]
              for side, (_, listed) in unknown.items()}
    extended = extend_vocabulary(model, tokens)
    added = ", ".join(f"{len(v):,} {side} tokens" for side, v in tokens.items())
    return extended, added


def settings_line(source, recipe, epochs=None):
    """The run's first line: what it starts from and which settings apply."""
    training, fine_tuning = recipe["training"], recipe["fine_tuning"]
    model = source.model
    size = model.preprocessor.get_config().get("tokenizer", {}).get("vocabulary")
    carried = f"vocabulary of {len(size):,}, " if isinstance(size, list) else ""
    parts = [f"peak learning rate {training['peak_learning_rate']:g}",
             f"warm-up {training['warmup_steps']} steps",
             f"{epochs or training['epochs']} epoch" + ("s" if (epochs or training["epochs"]) > 1
                                                        else ""),
             "validation every epoch" + (", best epoch kept" if fine_tuning["keep_best"] else "")]
    if fine_tuning.get("freeze"):
        parts.append(f"{fine_tuning['freeze']} frozen")
    if fine_tuning.get("keep_original"):
        parts.append(f"keep_original {fine_tuning['keep_original']:g}")
    return (f"fine-tuning {source.name} (a {source.task}, {model.count_params():,} parameters; "
            f"its weights, {carried}tokenizer and labels carried over, a fresh optimizer): "
            + ", ".join(parts))


# === What a fine-tuning run does at the end ===

class BestEpoch(keras.callbacks.Callback):
    """Keeps the weights of the epoch with the best `val_<score>` (read from the epoch
    logs, after the validation callback wrote them), in memory."""

    def __init__(self):
        super().__init__()
        self.best, self.epoch, self.weights, self.key = None, None, None, None

    def on_epoch_end(self, epoch, logs=None):
        scores = {k: v for k, v in (logs or {}).items()
                  if k.startswith("val_") and k != "val_loss"}
        if not scores:
            return
        self.key = self.key or sorted(scores)[0]
        value = float(scores[self.key])
        # A language model's perplexity is better lower (`Task.lower_score_is_better`).
        sign = -1.0 if getattr(self.model, "lower_score_is_better", False) else 1.0
        if self.best is None or sign * value > sign * self.best:
            self.best, self.epoch = value, epoch + 1
            self.weights = [np.array(w) for w in self.model.get_weights()]

    def restore(self, model):
        """Puts the best epoch's weights back; returns a line saying so, or None."""
        if self.weights is None:
            return None
        model.set_weights(self.weights)
        name = self.key[4:].replace("_", " ")
        return f"kept epoch {self.epoch} (validation {name} {self.best:.4g})"


def blend_with_source(model, source, keep):
    """`keep · source + (1 − keep) · model` for every weight of the source's shape (a new
    head stays as trained)."""
    if not keep:
        return
    weights = model.get_weights()
    mixed = [keep * old + (1.0 - keep) * new if old.shape == new.shape else new
             for old, new in zip(source.weights, weights)] \
        if len(weights) == len(source.weights) else weights
    model.set_weights(mixed)


def score(model, pairs):
    """`(name, value)`: greedy BLEU for a generative task, else its validation score."""
    if getattr(model, "validation_score", None) is None and hasattr(model, "evaluate_bleu"):
        return "BLEU", float(model.evaluate_bleu(pairs, beam_size=1,
                                                 print_signature=False)["bleu"])
    return model.validation_score.replace("_", " "), float(model.evaluate(pairs)[
        model.validation_score])


def forgetting_line(source, model, validation, before):
    """The closing report: the source's card slice and the user's validation examples,
    scored before (the source) and after (the saved model)."""
    parts = []
    if source.card_slice and before.get("card") is not None:
        name, after = score(model, source.card_slice)
        parts.append(f"{source.name}'s card slice ({len(source.card_slice)} examples) "
                     f"{name} {before['card']:.4g} before, {after:.4g} after")
    if validation and before.get("valid") is not None:
        name, after = score(model, validation)
        parts.append(f"your validation examples ({len(validation)}) {name} "
                     f"{before['valid']:.4g} before, {after:.4g} after")
    return ("fine-tuning result: " + "; ".join(parts)) if parts else None


def scores_before(source, validation):
    """The source's scores on its card slice and on `validation` (None where absent, or
    where the data's labels are not the source's)."""
    before = {"card": score(source.model, source.card_slice)[1] if source.card_slice else None,
              "valid": None}
    if validation:
        try:
            before["valid"] = score(source.model, validation)[1]
        except KseqError:  # labels the source does not have (a new head)
            pass
    return before
