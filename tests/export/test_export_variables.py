"""An export holds the variables its signatures read, and no optimizer state.

Each task's tiny model is compiled (Adam) and has its optimizer built, as a
training step leaves it: Adam's two slots per weight and its iteration count
exist. The export's checkpoint must hold exactly the model's weights, with the
model's values, and nothing under `optimizer`; the model itself keeps its
optimizer (`testing.check_export_holds_weights_only`). The text classifier is
exported through `kseq export` from a `.keras` file holding the optimizer state,
which also prints the export's size. The translator and the captioner are checked
on the exports their export tests make anyway (tests/export/test_export.py: the
shared overfit translator, exported directly and through `kseq export`;
tests/export/test_captioner_export.py: the shared captioner through `kseq export`):
each export here costs a trace of its search, seconds.
"""

import re

import pytest

import classifier_fixtures
import image_classifier_fixtures
import tagger_fixtures
from kseq.cli import main
from kseq.export import export_bytes
from testing import check_export_holds_weights_only

pytestmark = pytest.mark.slow  # a build and an export each: 2-5 s

BUILDERS = {
    "text classifier": lambda: classifier_fixtures.build("ngrams"),
    "image classifier": image_classifier_fixtures.build,
    "tagger": tagger_fixtures.build,
}


def with_optimizer_state(model):
    """`model` with Adam's slots and iteration count made (what a first step makes)."""
    model.optimizer.build(model.trainable_variables)
    assert len(model.optimizer.variables) > 2 * len(model.trainable_variables)
    return model


def export_through_cli(model, folder, capsys):
    """`kseq export` of `model` saved (optimizer and all) as a trained folder's model.keras;
    returns the version folder, checking the size printed on the success line."""
    trained = folder / "trained"
    trained.mkdir()
    model.save(trained / "model.keras")
    assert main(["export", str(trained), "--output", str(folder / "serving" / "spam")]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    found = re.fullmatch(r"exported (\S+): ([0-9.]+) (MB|kB) \(models\.config in \S+\)", line)
    assert found, line
    version_dir, size, unit = found.groups()
    assert float(size) == pytest.approx(export_bytes(version_dir) / (1e6 if unit == "MB"
                                                                     else 1e3), abs=0.051)
    return version_dir


@pytest.mark.parametrize("task", sorted(BUILDERS))
def test_an_export_holds_the_weights_and_no_optimizer_state(task, tmp_path, capsys):
    model = with_optimizer_state(BUILDERS[task]())
    if task == "text classifier":
        export_dir = export_through_cli(model, tmp_path, capsys)
    else:
        export_dir = str(tmp_path / "1")
        model.export(export_dir)
    check_export_holds_weights_only(model, export_dir)
