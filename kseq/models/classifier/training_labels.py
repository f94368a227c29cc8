"""The labels of a classifier's training file, checked before anything trains on them.

A classifier takes its classes from `model.label_names` in its recipe when the
recipe lists them, else from the sorted labels of its training data. With a
list, a label outside it is a typo: refused with one line naming the file and
its 1-based line (without one it would silently become a class of its own).
Either way a label seen on one line only is warned about: one example teaches
a class nothing, and it is often a typo. Without a list, labels that differ
only in case (`POS` beside `pos`) are warned about too: each would be a class.

Example:
>>> recipe_labels({"model": {"label_names": ["ham", "spam"]}})
['ham', 'spam']
>>> try:
...     check_label_rows(["ham", "spam"], [(1, "hi", "ham"), (2, "win!", "spma")], "sms.tsv")
... except KseqError as error:
...     print(str(error)[:42])
sms.tsv line 2: the label 'spma' is not on
"""

import collections
import logging

from kseq.errors import KseqError
from kseq.models.label_spellings import warn_case_variants  # noqa: F401  (its old home)

logger = logging.getLogger("kseq")
SHOWN = 5  # single-use labels named in the warning


def recipe_labels(recipe):
    """The recipe's `model.label_names` (a list of at least two distinct strings), or None."""
    labels = (recipe.get("model") or {}).get("label_names")
    if labels is None:
        return None
    named = isinstance(labels, list) and all(isinstance(l, str) and l.strip() for l in labels)
    if not named or len(labels) < 2 or len(set(labels)) != len(labels):
        raise KseqError("`model.label_names` must list at least two distinct, non-empty label "
                        f"names. Received: model.label_names={labels!r}")
    return list(labels)


def check_label_rows(labels, rows, path):
    """Refuses the first `(line, input, label)` row whose label is not in `labels` (when
    given), and warns once about labels that occur on a single line."""
    if labels is not None:
        known = set(labels)
        for line, _, label in rows:
            if label not in known:
                raise KseqError(f"{path} line {line}: the label {label!r} is not one of the "
                                f"recipe's model.label_names {labels}; correct the line or add the "
                                f"label to model.label_names. Received: {label!r}")
    else:  # the classes come from the data
        warn_case_variants((label for _, _, label in rows), path, "label")
    counts = collections.Counter(label for _, _, label in rows)
    once = [(line, label) for line, _, label in rows if counts[label] == 1]
    if once:
        shown = ", ".join(f"{label!r} (line {line})" for line, label in once[:SHOWN])
        logger.warning("%s: %d label(s) occur on one line only, a typo or a class too rare "
                       "to learn: %s%s", path, len(once), shown,
                       " ..." if len(once) > SHOWN else "")
