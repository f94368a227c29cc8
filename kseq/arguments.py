"""Checks for numeric and text arguments at kseq's boundaries (API and CLI).

Each check returns the value (converted where that is lossless) or raises
`KseqError` with one line that names the argument, says what was expected and
ends with `Received: name=value`. `bool` is never accepted as a number
(`True` is an `int` in Python, but `beam_size=True` is a mistake).

Example:
>>> from kseq.arguments import check_int
>>> check_int("beam_size", 4)
4
>>> check_int("beam_size", 0)
Traceback (most recent call last):
...
kseq.errors.KseqError: `beam_size` must be an integer >= 1. Received: beam_size=0
"""

import math
import numbers
import os

from kseq.errors import KseqError


def _fail(name, expected, value):
    raise KseqError(f"`{name}` must be {expected}. Received: {name}={value!r}")


def check_int(name, value, minimum=1, maximum=None, allow_none=False):
    """An integer in `[minimum, maximum]` (numpy integers too; not bool, not 2.5)."""
    if value is None and allow_none:
        return None
    expected = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    if allow_none:
        expected += " or None"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _fail(name, expected, value)
    if value < minimum or (maximum is not None and value > maximum):
        _fail(name, expected, value)
    return int(value)


def check_float(name, value, minimum=None, maximum=None, exclusive_minimum=False,
                allow_none=False):
    """A finite real number in the given range (`exclusive_minimum` makes it `> minimum`)."""
    if value is None and allow_none:
        return None
    bounds = []
    if minimum is not None:
        bounds.append(f"{'>' if exclusive_minimum else '>='} {minimum}")
    if maximum is not None:
        bounds.append(f"<= {maximum}")
    expected = "a finite number" + (" " + " and ".join(bounds) if bounds else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(name, expected, value)
    value = float(value)
    if not math.isfinite(value):
        _fail(name, expected, value)
    if minimum is not None and (value < minimum or (exclusive_minimum and value == minimum)):
        _fail(name, expected, value)
    if maximum is not None and value > maximum:
        _fail(name, expected, value)
    return value


def seconds_from_environment(name, default):
    """The environment variable `name` as a positive number of seconds, or `default` when it
    is not set.

    >>> seconds_from_environment("KSEQ_NO_SUCH_TIMEOUT_S", 120)
    120
    """
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        seconds = float(text)
        if not seconds > 0 or not math.isfinite(seconds):
            raise ValueError
    except ValueError:
        raise KseqError(f"{name} must be a positive number of seconds. "
                        f"Received: {name}={text!r}") from None
    return seconds


def check_choice(name, value, choices):
    """One of `choices` (compared with `==`)."""
    if value not in tuple(choices):
        _fail(name, f"one of {tuple(choices)}", value)
    return value


def check_sampling(sampling, temperature, top_k, top_p, seed, n_best, beam_size):
    """The sampling options of a search, checked: `(temperature, top_k, top_p, seed)`;
    `n_best > 1` needs beam search with `beam_size >= n_best`.

    >>> check_sampling(True, 0.7, 0, 0.9, None, 1, 1)
    (0.7, 0, 0.9, None)
    """
    if not isinstance(sampling, bool):
        raise KseqError(f"`sampling` must be True or False. Received: sampling={sampling!r}")
    temperature = check_float("temperature", temperature, minimum=0.0, exclusive_minimum=True)
    top_k = check_int("top_k", top_k, minimum=0)
    top_p = check_float("top_p", top_p, minimum=0.0, maximum=1.0, exclusive_minimum=True)
    seed = check_int("seed", seed, minimum=0, allow_none=True)
    if n_best > 1 and (sampling or beam_size < n_best):
        raise KseqError(f"`n_best` needs beam search with beam_size >= n_best. "
                        f"Received: n_best={n_best}, beam_size={beam_size}")
    return temperature, top_k, top_p, seed


def check_texts(name, texts):
    """A list (or tuple) of `str` or `bytes`; a single string is refused (a common slip).

    Returns a list of UTF-8 `bytes`. A `str` holding a lone surrogate becomes
    its `surrogatepass` bytes (U+D800 is ED A0 80), which are invalid UTF-8:
    like invalid bytes, they are left for the preprocessor, which replaces
    each invalid byte with U+FFFD in the graph — the exported model's rule,
    so a served model given the same bytes returns the same text and score.
    """
    if isinstance(texts, (str, bytes)) or texts is None:
        _fail(name, "a list of strings", texts)
    try:
        items = list(texts)
    except TypeError:
        _fail(name, "a list of strings", texts)
    encoded = []
    for index, text in enumerate(items):
        if isinstance(text, str):
            encoded.append(_utf8(text))
        elif isinstance(text, bytes):
            encoded.append(text)
        else:
            raise KseqError(f"`{name}` must hold only strings; item {index} is "
                            f"{type(text).__name__}. Received: {name}[{index}]={text!r}")
    return encoded



def _utf8(text):
    # Valid text encodes as usual; a lone surrogate keeps its three bytes (see check_texts).
    return text.encode("utf-8", "surrogatepass")
