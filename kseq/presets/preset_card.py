"""One preset's card, as `kseq presets NAME` prints it, read from the catalog without
TensorFlow: what it is, the data, tokenizer, model and training its recipe names, and the
weights it ships with their scores on the committed 200-example test slice.

Example:
>>> fields = dict(card_fields("sms_spam_classifier"))
>>> fields["task"]
'classifier, ngrams+max'
>>> fields["scores"]
'accuracy 1.0, macro_f1 1.0 on 200 test examples (slices/sms_spam_classifier.test200.tsv)'
>>> dict(card_fields("numbers_fr_tiny"))["weights"]
'none shipped: kseq train numbers_fr_tiny --output DIR'
"""

import json

from kseq.presets.catalog import canonical_name, preset_recipe
from kseq.presets.listing import architecture


def card_fields(name):
    """`(label, text)` pairs of preset `name`'s card, in the order printed (`ValueError`
    for an unknown name)."""
    recipe = preset_recipe(name)
    name = canonical_name(name)
    weights = recipe.pop("weights", None)
    fields = [("preset", name),
              ("task", f"{recipe.get('task', 'translator')}, {architecture(recipe)}"),
              ("description", recipe.get("description", "-")),
              ("domain", recipe.get("domain", "-"))]
    for section in ("data", "tokenizer", "model", "training"):
        if recipe.get(section):
            fields.append((section, _options(recipe[section])))
    if weights:
        fields.append(("weights", f"{weights['file']}, {weights['bytes'] / 1e6:.1f} MB, "
                                  f"{weights.get('dtype', 'float32')}, SHA-256 "
                                  f"{weights['sha256'][:12]}..."))
        if weights.get("slice_200"):
            fields.append(("scores", _slice_scores(weights["slice_200"])))
    else:
        fields.append(("weights", f"none shipped: kseq train {name} --output DIR"))
    if recipe.get("sources"):
        fields.append(("sources", _options(recipe["sources"])))
    return fields


def _options(section):
    """A recipe section as `key=value` words (JSON values, lists without spaces)."""
    if not isinstance(section, dict):
        return _value(section)
    return " ".join(f"{key}={_value(value)}" for key, value in section.items())


def _value(value, longest=8):
    """A JSON value; a list of more than `longest` items (1,000 class names) by its size
    and first items."""
    if isinstance(value, list) and len(value) > longest:
        first = json.dumps(value[:3], ensure_ascii=False, separators=(",", ":"))[1:-1]
        return f"[{len(value)} items: {first},...]"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _slice_scores(entry):
    """The scores the catalog keeps for the committed slice, and the slice's file."""
    scores = ", ".join(f"{key} {value}" for key, value in entry.items() if key != "file")
    return f"{scores} on 200 test examples ({entry['file']})"
