"""Checks for the data builders' arguments: one `KseqError` line naming the argument.

`bool` is never a number here (`train_size=True` is a mistake, though `True`
is an `int` in Python), nor is `2.5` or `"10"`; numpy integers are accepted.

Example:
>>> check_integer("train_size", 20)
20
>>> check_integer("train_size", -5)
Traceback (most recent call last):
...
kseq.errors.KseqError: `train_size` must be an integer >= 0. Received: train_size=-5
"""

import numbers

from kseq.errors import KseqError


def check_integer(name, value, minimum=0, maximum=None):
    """`value` as an `int` if it is an integer in `[minimum, maximum]`, else `KseqError`."""
    expected = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or value < minimum or (maximum is not None and value > maximum)):
        raise KseqError(f"`{name}` must be {expected}. Received: {name}={value!r}")
    return int(value)


def check_choice(name, value, choices):
    """`value` if it is one of `choices`, else `KseqError` listing them."""
    if not isinstance(value, str) or value not in choices:
        raise KseqError(f"`{name}` must be one of {tuple(choices)}. Received: {name}={value!r}")
    return value
