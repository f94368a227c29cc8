"""The argparse types of the `kseq` command's options: checked numbers, `--set` and
`--columns`."""

import argparse
import json

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError


def _integer(minimum):
    """An argparse type: the text as an integer >= `minimum` (kseq.arguments' check)."""
    def parse(text):
        try:
            return check_int("value", int(text), minimum=minimum)
        except (ValueError, KseqError):
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}. "
                                             f"Received: {text!r}") from None
    return parse


def _positive_number(text):
    try:
        return check_float("value", float(text), minimum=0.0, exclusive_minimum=True)
    except (ValueError, KseqError):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0. "
                                         f"Received: {text!r}") from None


def _fraction(text):
    try:
        return check_float("value", float(text), minimum=0.0, maximum=1.0)
    except (ValueError, KseqError):
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1. "
                                         f"Received: {text!r}") from None


def _finite_number(text):
    try:
        return check_float("value", float(text))
    except (ValueError, KseqError):
        raise argparse.ArgumentTypeError(f"must be a finite number. "
                                         f"Received: {text!r}") from None


# The sections of a recipe `--set` may change (`kseq.models.recipes`; "weights" is the catalog's).
RECIPE_SECTIONS = ("task", "description", "data", "tokenizer", "model", "training",
                   "fine_tuning")


def _recipe_override(text):
    """An argparse type for `--set KEY=VALUE`: a dotted recipe key and a JSON value (text
    that is not JSON stays a string) -> the override as a nested dict."""
    key, equals, value = text.partition("=")
    parts = key.strip().split(".")
    if not equals or not all(parts) or parts[0] not in RECIPE_SECTIONS:
        raise argparse.ArgumentTypeError(
            f"must be KEY=VALUE, KEY a dotted recipe key in {', '.join(RECIPE_SECTIONS)} "
            f"(e.g. training.epochs=5 or model.dropout=0.2). Received: {text!r}")
    try:
        override = json.loads(value)
    except ValueError:
        override = value  # a plain word: model.encoder=rnn
    for part in reversed(parts):
        override = {part: override}
    return override


def _column_names(text):
    """An argparse type for `--columns INPUT,TARGET`: two header names of a data file ->
    `(input, target)` (whether the header has them is the data reader's check)."""
    names = tuple(name.strip() for name in text.split(","))
    if len(names) != 2 or not all(names):
        raise argparse.ArgumentTypeError(
            f"must be two names of the data file's header, INPUT,TARGET (e.g. "
            f"english,french). Received: {text!r}")
    if names[0] == names[1]:  # said before any file is read (a model would learn to copy)
        raise argparse.ArgumentTypeError(f"must name two different header columns, the input "
                                         f"and the target. Received: {text!r}")
    return names


def _data_service_override(text):
    """An argparse type for `--data-service grpc://HOST:PORT`: the override
    `training.data_service` (`kseq.training.data_service.ADDRESS`, written out here so that
    `kseq --help` loads no TensorFlow)."""
    import re

    if not re.match(r"^grpc://[^\s:/]+:\d{1,5}$", text):
        raise argparse.ArgumentTypeError(f"must be grpc://HOST:PORT, the dispatcher's "
                                         f"address. Received: {text!r}")
    return {"training": {"data_service": text}}
