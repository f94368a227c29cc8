"""`kseq.zoo`: trained models by preset name, and ready-to-fit ones by architecture.

Presets are JSON recipes (data, tokenizer, model, training) shipped in `kseq/presets/`, some
with trained weights (`kseq.presets.catalog`). As in keras-hub, a preset loads its weights;
`load_weights=False` builds the untrained recipe. Every builder takes `preset` (a preset name,
a recipe file, an architecture of the task, a saved `.keras` file or run folder), `train_data`
(pairs giving the vocabulary and labels; default: the recipe's data), `vocab`, `labels`
(classes, tags), `recipe` (overrides, merged right-most wins), `load_weights`, and
hyper-parameters as keywords; the task class's `from_recipe` builds. Bad input: `KseqError`.
"""

import os

from kseq import ctranslate2
from kseq.errors import KseqError
from kseq.models import ARCHITECTURES  # noqa: F401 (a translator's architectures)
from kseq.models import Captioner, LanguageModel, SequenceClassifier, SequenceTagger, Translator
from kseq.models.recipe_values import check_model_section, check_sections
from kseq.models.recipes import (DATA_BUILDERS, balanced_class_weights,  # noqa: F401
                                 build_data, load_recipe, make_tokenizer, merge)
from kseq.presets.catalog import (canonical_name, close_presets, is_preset,
                                  load_preset_model, presets)
from kseq.models.renamed_arguments import RENAMED, new_names  # noqa: F401 (kseq 0.1's names)
from kseq.models.saved_files import load_saved_task, saved_model_file

# The task classes by their recipes' `"task"` (a recipe without one is a translator's).
TASKS = {task.preset_task: task for task in (Translator, Captioner, SequenceClassifier,
                                             SequenceTagger, LanguageModel)}
TASK_BUILDERS = {name: cls.from_recipe for name, cls in TASKS.items()}


def register_task(name):
    """Decorator: `builder(recipe, train_data) -> compiled model` for `"task": name` recipes."""
    def register(builder):
        TASK_BUILDERS[name] = builder
        return builder
    return register


def build(recipe, train_data=None):
    """The compiled model a recipe describes: its `"task"` (default "translator") picks the
    builder (a task class's `from_recipe`, or one given to `register_task`). Example:
    >>> import kseq
    >>> recipe = {"model": {"arch": "rnn", "units": 8, "embedding_dim": 8}}
    >>> type(kseq.zoo.build(recipe, [("one", "un")])).__name__
    'Translator'
    """
    task = recipe.get("task", "translator")
    if task not in TASK_BUILDERS:
        raise KseqError(f"Unknown task; expected one of {sorted(TASK_BUILDERS)}. "
                        f"Received: task={task!r}")
    return TASK_BUILDERS[task](recipe, train_data)


def takes_images(recipe):
    """Whether a recipe's model reads images (its data: `image path<TAB>target` lines)."""
    task = TASKS.get(recipe.get("task", "translator"))
    return bool(task and task.reads_images(recipe))


def describe(recipe):
    """The architecture column of `kseq presets` for a recipe (`Task.describe`)."""
    task = TASKS.get(recipe.get("task", "translator"))
    return task.describe(recipe) if task else "-"


def _recipe_of(task, preset):
    """The recipe `preset` names for `task`: an architecture's, a file's or a preset's."""
    if preset in task.architectures and not os.path.isfile(str(preset)):
        return task.default_recipe(preset)
    if not (is_preset(preset) or os.path.isfile(str(preset))):
        close = close_presets(str(preset))  # as the `kseq` command suggests them
        names = f"close presets: {', '.join(close)}" if close else (
            f"expected one of {', '.join(presets())}")
        raise KseqError(f"Unknown preset; {names}; or a recipe file, or a {task.preset_task} "
                        f"architecture {list(task.architectures)} (kseq.zoo.presets() lists "
                        f"the presets). Received: {preset!r}")
    recipe = load_recipe(preset)
    if recipe.get("task", "translator") != task.preset_task:
        raise KseqError(f"{preset!r} is not a {task.preset_task} preset (task "
                        f"{recipe.get('task', 'translator')!r}). Received: {preset!r}")
    return recipe


def _model(task, old_names, model_options, preset, recipe, load_weights, **inputs):
    """A preset's trained model, or `task.from_recipe` of the merged recipe."""
    inputs = new_names(old_names, model_options, dict(inputs, preset=preset))
    preset = inputs.pop("preset")
    given = sorted(k for k, v in {**inputs, "recipe": recipe, **model_options}.items() if v)
    if saved_model_file(preset):  # a `.keras` file or a run folder
        return load_saved_task(task, preset, given)
    base = _recipe_of(task, preset)  # read once
    if load_weights and is_preset(preset):
        if given:
            raise KseqError(f"A trained preset brings its own vocabulary and hyper-parameters; "
                            f"to build {canonical_name(preset)!r} anew from {', '.join(given)}, "
                            f"pass load_weights=False. Received: {', '.join(given)}")
        return load_preset_model(preset)
    if recipe is not None:
        check_sections(recipe, "recipe")
    spec = task.merged_recipe(base, recipe, {"model": model_options})
    check_sections(spec)
    check_model_section(spec.get("model", {}))  # max_source_length=0 translated all to ''
    try:
        return task.from_recipe(spec, **inputs)
    except KseqError:
        raise
    except (TypeError, ValueError) as error:  # an unknown option, a value out of its range
        raise KseqError(f"The model options do not fit a {task.preset_task} ({error}). "
                        f"Received: model={spec.get('model')!r}") from error


def translator(preset="transformer", *, train_data=None, vocab=None, recipe=None,
               load_weights=True, **model_options):
    """A compiled `kseq.models.Translator`: `preset` a preset name, a recipe file or an
    architecture (`kseq.models.build_translator`); `vocab` one vocabulary for both
    sides or a `(source, target)` tuple.

    Example:
    >>> import kseq
    >>> kseq.zoo.translator("numbers_fr_transformer").translate(["forty-two"])
    ['quarante-deux']
    >>> kseq.zoo.translator("rnn", train_data=[("one", "un")], units=8).encoder.units
    8

    A folder written by `kseq export --format ctranslate2` loads as a
    `CTranslate2Translator`.
    """
    if ctranslate2.is_ctranslate2_export(preset):
        given = dict(train_data=train_data, vocab=vocab, recipe=recipe)
        return ctranslate2.load_ctranslate2_translator(preset, given, model_options)
    return _model(Translator, ("preset_or_arch", "train_pairs", "source_vocab", "target_vocab"),
                  model_options, preset=preset, train_data=train_data, vocab=vocab,
                  recipe=recipe, load_weights=load_weights)


def captioner(preset="small_cnn", *, train_data=None, vocab=None, recipe=None,
              load_weights=True, **model_options):
    """A compiled `kseq.models.Captioner`: `preset` a preset name, a recipe file or an
    image encoder (`kseq.models.build_captioner`; `decoder="transformer"` or
    `"attention"`); `train_data` `(encoded image, caption)` pairs.

    Example:
    >>> import kseq
    >>> model = kseq.zoo.captioner("small_cnn", decoder="attention",
    ...                            train_data=[(b"<png bytes>", "a red dot")],
    ...                            image_size=16, hidden_dim=8, filters=[8])
    >>> model.decoder.attention
    'bahdanau'
    """
    return _model(Captioner, ("preset_or_encoder", "train_captions", "target_vocab"),
                  model_options, preset=preset, train_data=train_data, vocab=vocab,
                  recipe=recipe, load_weights=load_weights)


def classifier(preset="transformer", *, train_data=None, vocab=None, labels=None, recipe=None,
               load_weights=True, **model_options):
    """A compiled `kseq.models.SequenceClassifier`: `preset` a preset name, a recipe file,
    or a text or image encoder (`kseq.models.build_classifier`); `train_data` `(text,
    label)` or `(encoded image, label)` pairs. `training.class_weight` ("balanced",
    `{label: weight}` or a list) weighs the loss per class.

    Example:
    >>> import kseq
    >>> pairs = [("great film", "positive"), ("dull film", "negative")]
    >>> model = kseq.zoo.classifier("rnn", train_data=pairs, pooling="attention", hidden_dim=8)
    >>> model.label_names
    ['negative', 'positive']
    """
    return _model(SequenceClassifier, ("preset_or_encoder", "train_pairs", "label_names"),
                  model_options, preset=preset, train_data=train_data, vocab=vocab,
                  labels=labels, recipe=recipe, load_weights=load_weights)


def tagger(preset="rnn", *, train_data=None, vocab=None, labels=None, recipe=None,
           load_weights=True, **model_options):
    """A compiled `kseq.models.SequenceTagger`: `preset` a preset name, a recipe file or an
    encoder (`kseq.models.build_tagger`); `train_data` `(words, tags)` pairs (lists or
    space-separated strings); `vocab` a `CharTokenizer`, character list or file.

    Example:
    >>> import kseq
    >>> model = kseq.zoo.tagger("rnn", train_data=[(["the", "dog"], ["DET", "NOUN"])],
    ...                         hidden_dim=8)
    >>> model.tag_names
    ['DET', 'NOUN']
    """
    return _model(SequenceTagger, ("preset_or_encoder", "train_pairs", "tag_names"),
                  model_options, preset=preset, train_data=train_data, vocab=vocab,
                  labels=labels, recipe=recipe, load_weights=load_weights)


def language_model(preset="transformer", *, train_data=None, vocab=None, categories=None,
                   recipe=None, load_weights=True, **model_options):
    """A compiled `kseq.models.LanguageModel` (`kseq.models.build_language_model`): `preset` a
    preset, a recipe file or an architecture ("transformer", "gru", "lstm"); `train_data`
    texts or `(category, text)` pairs; `categories` (default: those of `train_data`)."""
    return _model(LanguageModel, (), model_options, preset=preset, train_data=train_data,
                  vocab=vocab, categories=categories, recipe=recipe, load_weights=load_weights)
