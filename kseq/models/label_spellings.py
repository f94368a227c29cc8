"""Class names that differ only in case, warned about once per file (a classifier's labels,
a tagger's tags).

Example:
>>> warn_case_variants(["POS", "pos", "NEG"], "reviews.tsv")  # logs one warning
"""

import collections
import logging

logger = logging.getLogger("kseq")
_warned = set()  # (path, variants) already named: a file is checked in chunks of rows


def warn_case_variants(labels, path, kind="label"):
    """Warns once per file about labels that differ only in case (`POS` beside `pos`):
    each would become a class of its own, which is rarely what a file means."""
    spellings = collections.defaultdict(set)
    for label in labels:
        spellings[label.casefold()].add(label)
    variants = [sorted(names) for names in spellings.values() if len(names) > 1]
    for names in variants:
        if (path, tuple(names)) in _warned:
            continue
        _warned.add((path, tuple(names)))
        logger.warning("%s: %ss %s differ only in case and become separate classes; write "
                       "them alike if they mean one class, or list both in the recipe's "
                       "model.%s_names", path, kind, " and ".join(map(repr, names)),
                       "tag" if kind == "tag" else "label")
