"""The table `kseq presets` prints, read from the catalog without loading TensorFlow.

`kseq presets` answers in a fraction of a second because nothing here imports
TensorFlow or Keras: the architecture column cannot ask the task classes (Keras
models, `Task.describe`), so each task's naming rule is written here as data, and
`tests/test_cli_startup.py` checks that it agrees with `kseq.zoo.describe` on every
preset and on the default recipe of every architecture of every task.

Example:
>>> rows = {row["preset"]: row for row in preset_rows()}
>>> rows["numbers_fr_tiny"]["task"], rows["numbers_fr_tiny"]["arch"]
('translator', 'transformer')
>>> rows["numbers_fr_tiny"]["domain"]
'English number words'
>>> architecture({"task": "tagger", "model": {"encoder": "transformer"}})
'transformer+chars'
"""

from kseq.presets.catalog import preset_recipe, presets

# A translator's architecture names by their (encoder, decoder) parts
# (`kseq.models.translator.architectures.ARCHITECTURE_PARTS`).
TRANSLATOR_PARTS = {("transformer", "transformer"): "transformer",
                    ("rnn", "attention"): "attention", ("rnn", "rnn"): "rnn",
                    ("conv", "conv"): "conv"}
# The other tasks: `model` keys (with their defaults) joined by "+", and a fixed last part.
JOINED_KEYS = {"captioner": ((("encoder", "small_cnn"), ("decoder", "transformer")), None),
               "classifier": ((("encoder", "transformer"), ("pooling", "mean")), None),
               "tagger": ((("encoder", "rnn"),), "chars")}


def architecture(recipe):
    """The architecture column for `recipe`, as its task's `describe` names it."""
    model = recipe.get("model") or {}
    task = recipe.get("task", "translator")
    if task == "translator":
        if "encoder" not in model and "decoder" not in model:
            return model.get("arch", "transformer")
        pair = (model.get("encoder", "transformer"), model.get("decoder", "transformer"))
        return TRANSLATOR_PARTS.get(pair, "+".join(pair))
    if task == "language_model":  # `LanguageModel.describe`: the `arch`
        return str(model.get("arch", "transformer"))
    if task not in JOINED_KEYS:
        return "-"
    keys, last = JOINED_KEYS[task]
    parts = [str(model.get(key, default)) for key, default in keys]
    return "+".join(parts + ([last] if last else []))


def preset_rows():
    """One dict per shipped preset: `preset`, `task`, `arch`, `weights` (size, or "-"),
    `domain` (the kind of input it was trained on, or "-"), `description`."""
    rows = []
    for name in presets():
        recipe = preset_recipe(name)
        entry = recipe.pop("weights", None)
        rows.append({"preset": name, "task": recipe.get("task", "translator"),
                     "arch": architecture(recipe),
                     "weights": f"{entry['bytes'] / 1e6:.1f}MB" if entry else "-",
                     "domain": recipe.get("domain") or "-",
                     "description": recipe.get("description", "")})
    return rows
