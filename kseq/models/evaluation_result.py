"""`EvaluationResult`: what `Task.evaluate(pairs)` returns, for every task.

A read-only mapping of the task's scores (`result["bleu"]`, `result["accuracy"]`)
with a one-line `summary()` (the headline scores, the count, and a note such as
sacrebleu's signature) and `to_dict()` for JSON. A generative task's outputs
(its hypotheses, in input order) are in `outputs`, apart from the scores.

Example:
>>> from kseq.models.evaluation_result import EvaluationResult
>>> result = EvaluationResult({"accuracy": 0.912, "macro_f1": 0.8974, "examples": 500},
...                           headline=[("accuracy", "accuracy"), ("macro-F1", "macro_f1")],
...                           count="examples")
>>> result.summary()
'accuracy 0.912 macro-F1 0.897 (500 examples)'
>>> result["accuracy"], result.to_dict()["examples"]
(0.912, 500)
"""

import copy
from collections.abc import Mapping

from kseq.errors import KseqError


class EvaluationResult(Mapping):
    """Scores of one evaluation; see the module docstring.

    Args:
        metrics: the scores, a JSON-ready dict (numbers, strings, nested dicts
            and lists).
        headline: `(label, key)` or `(label, key, format)` items: the scores
            `summary()` shows, in order (format default `".3f"`).
        count: the key of `metrics` that counts what was scored ("pairs",
            "examples", "sentences"); the summary names it after the number.
        note: text after the scores in the summary (sacrebleu's signature).
        outputs: what the model produced, in input order (or None).
    """

    def __init__(self, metrics, headline, count, note=None, outputs=None):
        self.metrics = dict(metrics)
        self.headline = [tuple(item) for item in headline]
        missing = [item[1] for item in self.headline if item[1] not in self.metrics]
        if missing or count not in self.metrics:
            raise KseqError(f"The headline and the count must name scores of the result "
                            f"({sorted(self.metrics)}). Received: "
                            f"{missing + ([] if count in self.metrics else [count])}")
        self.count = count
        self.note = note
        self.outputs = outputs

    def __getitem__(self, key):
        return self.metrics[key]

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self):
        return len(self.metrics)

    def summary(self):
        """One line: the headline scores, how many were scored, and the note."""
        scores = " ".join(f"{label} {self.metrics[key]:{fmt[0] if fmt else '.3f'}}"
                          for label, key, *fmt in self.headline)
        line = f"{scores} ({self.metrics[self.count]} {self.count})"
        return f"{line} | {self.note}" if self.note else line

    def to_dict(self):
        """The scores as a new dict (for `json.dumps`); the outputs are left out."""
        return copy.deepcopy(self.metrics)

    def __repr__(self):
        return f"EvaluationResult({self.summary()!r})"
