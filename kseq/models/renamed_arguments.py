"""Keyword names of kseq 0.1 that the `kseq.zoo` builders accept for one more release.

Example:
>>> import warnings
>>> from kseq.models.renamed_arguments import new_names
>>> options = {"train_pairs": [("one", "un")]}
>>> with warnings.catch_warnings(record=True):
...     warnings.simplefilter("always")
...     new_names(("train_pairs",), options, {"train_data": None})["train_data"]
[('one', 'un')]
"""

import warnings

from kseq.errors import KseqError

# Keyword names of kseq 0.1, accepted for one release with a DeprecationWarning.
RENAMED = {"preset_or_arch": "preset", "preset_or_encoder": "preset", "train_pairs": "train_data",
           "train_captions": "train_data", "label_names": "labels", "tag_names": "labels",
           "source_vocab": "vocab", "target_vocab": "vocab"}


def new_names(old_names, model_options, arguments):
    """`arguments` with the values `model_options` gave under `old_names` (taken out of it),
    each with a `DeprecationWarning` (`source_vocab`, `target_vocab`: `vocab=(source, target)`)."""
    sides = {}
    for old in [name for name in old_names if name in model_options]:
        new, value = RENAMED[old], model_options.pop(old)
        warnings.warn(f"`{old}` is deprecated and goes in the next release: pass `{new}`.",
                      DeprecationWarning, stacklevel=4)
        if new != "preset" and arguments[new] is not None:
            raise KseqError(f"`{old}` is the old name of `{new}`: pass one of them. "
                            f"Received: {old} and {new}")
        if old in ("source_vocab", "target_vocab") and "source_vocab" in old_names:
            sides[old] = value
        else:
            arguments[new] = value
    if sides:
        arguments["vocab"] = (sides.get("source_vocab"), sides.get("target_vocab"))
    return arguments
