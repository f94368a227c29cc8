"""Raw examples in `predict` and `fit`: what counts as raw, and `fit`'s batches made of them.

keras-hub's convention: a task model takes raw inputs (strings, bytes, file
paths, word lists) where Keras takes arrays, and runs its own preprocessor.
`predict(texts)` reads them in batches (`kseq.models.Task.predict`);
`fit(pairs)`, `fit(x=inputs, y=targets)` and `validation_data=pairs` become the
preprocessor's `training_dataset` (bucketed and padded with the recipe's
boundaries and batch size or token budget), so a Python list trains as `kseq
train` would train it. Model inputs (a `tf.data.Dataset`, numeric arrays,
dicts) are Keras's own, unchanged.
"""

import inspect
import math
import os

import keras
import numpy as np
import tensorflow as tf  # eager string tensors; tf.data errors

from kseq.errors import KseqError, one_line

# Keras's `fit` arguments after `x` and `y`, in order (positional ones are named by these).
FIT_ARGUMENTS = tuple(inspect.signature(keras.Model.fit).parameters)[3:]


def is_pairs(x):
    """Whether `x` is a list of `(input, reference)` pairs (not model inputs: a dataset,
    arrays, a dict, or a list of arrays, one per model input)."""
    return isinstance(x, list) and all(
        isinstance(pair, (tuple, list)) and len(pair) == 2 and not isinstance(pair[0], (
            int, float, np.number)) for pair in x)


def _is_raw_item(item):
    return isinstance(item, (str, bytes, os.PathLike)) or (
        isinstance(item, (list, tuple)) and all(isinstance(word, str) for word in item))


def raw_examples(x):
    """`x` as a list of raw examples (strings, bytes, file paths, word lists), or None when
    `x` is model inputs (numeric arrays or tensors, dicts, datasets). A lone string comes
    back as is, for the caller's one-line refusal."""
    if isinstance(x, tf.Tensor) and x.dtype == tf.string and tf.executing_eagerly():
        return x.numpy().tolist()
    if isinstance(x, np.ndarray) and (x.dtype.kind in "US" or (
            x.dtype.kind == "O" and all(isinstance(item, (str, bytes)) for item in x.flat))):
        return x.tolist()
    if isinstance(x, (str, bytes)):
        return x  # refused by the task's checks, in one line (a common slip)
    if isinstance(x, (list, tuple)) and (not x or any(_is_raw_item(item) for item in x)):
        return list(x)  # the task's checks name a bad item
    return None


def short(value):
    """`value` as an error's `Received:` shows it: a list by its length and first item."""
    if isinstance(value, (list, tuple)):
        first = f", first {value[0]!r:.60}" if value else ""
        items = "item" if len(value) == 1 else "items"
        return f"a {type(value).__name__} of {len(value)} {items}{first}"
    if isinstance(value, (np.ndarray, tf.Tensor)):
        return f"an array of shape {tuple(value.shape)}"
    return f"{value!r:.80}"


def _as_list(values):
    if isinstance(values, tf.Tensor) and tf.executing_eagerly():
        values = values.numpy()
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        return None
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in values]


def raw_pairs(x, y, alone=False):
    """`fit`'s `x` and `y` as `(input, target)` pairs, or None when they are model inputs;
    `KseqError` (one line) when they are raw but do not pair up. With `alone` (a task whose
    examples need no target: a language model's texts), raw `x` without `y` is returned as
    a list, as its preprocessor reads it."""
    if x is None or isinstance(x, tf.data.Dataset):
        return None
    if y is None and is_pairs(x):
        pairs = [tuple(pair) for pair in x]
    else:
        examples = raw_examples(x)
        if examples is None:
            return None
        if isinstance(examples, (str, bytes)):
            raise KseqError(f"`fit` takes a list of inputs, not one string. Received: "
                            f"x={short(x)}")
        if y is None and alone and examples:
            return examples
        if y is None:
            raise KseqError(f"`fit` on raw inputs needs their targets: `fit(x=inputs, "
                            f"y=targets)`, or `fit(pairs)` of (input, target) pairs. "
                            f"Received: x={short(x)}, y=None")
        targets = _as_list(y)
        if targets is None or len(targets) != len(examples):
            raise KseqError(f"`fit` needs one target per input, in two lists of equal "
                            f"length. Received: x={short(x)}, y={short(y)}")
        pairs = list(zip(examples, targets))
    if not pairs:
        raise KseqError(f"`fit` needs at least one example. Received: x={short(x)}")
    return pairs


def _validation_pairs(validation, alone=False):
    """`validation_data` as pairs when raw (a list of pairs, or `(inputs, targets)`)."""
    if isinstance(validation, list):
        return raw_pairs(validation, None, alone)
    if isinstance(validation, tuple) and len(validation) == 2:
        return raw_pairs(*validation)
    return None


def training_batches(model, pairs, batch_size=None, shuffle=True):
    """Raw `(input, target)` pairs -> `model.preprocessor.training_dataset(pairs)`: the
    recipe's boundaries and batch size (or `batch_size`), padding rows as in `kseq train`.
    Images may be file paths, bytes or uint8 arrays (read into encoded bytes first)."""
    preprocessor = model.preprocessor
    if getattr(preprocessor, "input_kind", "text") == "images" and not all(
            isinstance(value, bytes) for value, _ in pairs):
        images = preprocessor.encode_inputs([value for value, _ in pairs])
        pairs = list(zip(images, [target for _, target in pairs]))
    try:
        return preprocessor.training_dataset(pairs, batch_size=batch_size, shuffle=shuffle)
    except KseqError:
        raise
    except (TypeError, ValueError, tf.errors.OpError) as error:
        raise KseqError(f"{type(model).__name__}.fit cannot read these (input, target) pairs "
                        f"({one_line(error, 160)}). Received: {short(pairs)}") from None


def fit_arguments(model, x, y, args, kwargs):
    """Keras's `fit(x, y, *args, **kwargs)` with raw examples made into datasets:
    `(x, y, options)` by name. On raw training examples, `batch_size` and `shuffle`
    shape the batches and `validation_split` keeps the last share of the pairs (as Keras
    does for arrays); `sample_weight` is refused."""
    options = dict(zip(FIT_ARGUMENTS, args))
    repeated = sorted(set(options) & set(kwargs))
    if repeated:
        raise TypeError(f"fit() got multiple values for {repeated}")
    options.update(kwargs)
    pairs = raw_pairs(x, y, alone=getattr(model, "examples_without_targets", False))
    batch_size = None
    if pairs is not None:
        if options.get("sample_weight") is not None:
            raise KseqError("`sample_weight` belongs to array inputs; raw examples train with "
                            "the recipe's loss. Received: sample_weight="
                            f"{short(options['sample_weight'])}")
        split = options.pop("validation_split", 0.0) or 0.0
        if split and options.get("validation_data") is None:
            cut = int(math.ceil(len(pairs) * (1.0 - split)))
            pairs, options["validation_data"] = pairs[:cut], pairs[cut:]
        batch_size = options.pop("batch_size", None)
        shuffle, options["shuffle"] = options.get("shuffle", True), False  # the dataset's
        x, y = training_batches(model, pairs, batch_size, bool(shuffle)), None
    validation = _validation_pairs(options.get("validation_data"),
                                   getattr(model, "examples_without_targets", False))
    if validation is not None:
        size = options.pop("validation_batch_size", None) or batch_size
        options["validation_data"] = training_batches(model, validation, size, shuffle=False)
    if isinstance(x, tf.data.Dataset):
        options.setdefault("shuffle", False)  # see `kseq.models.Task.fit`
    return x, y, options
