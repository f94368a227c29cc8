"""Every bad argument gets one line naming it, exit code 2, and changes no file.

CLI rows run in-process through `kseq.cli.main(argv)`; API rows call the
public functions. The shipped numbers model (loaded once, as its preset) serves the rows
that need one.
"""

import io
import json
import math
import os
import shutil

import pytest

from kseq import zoo
from kseq.cli import main
from kseq.errors import KseqError
from kseq.training import train
from testing import load_presets_once

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "kseq", "presets",
                       "numbers_fr_transformer.keras")


def snapshot(folder):
    """Every file under `folder` with its bytes: a failed command must change none."""
    state = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                state[os.path.relpath(path, folder)] = handle.read()
    return state


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A model folder (the shipped model), a run folder with a recipe, and odd files."""
    root = tmp_path_factory.mktemp("bad_inputs")
    (root / "model").mkdir()
    shutil.copyfile(SHIPPED, root / "model" / "model.keras")
    run = root / "run"
    run.mkdir()
    (run / "recipe.json").write_text(json.dumps(zoo.load_recipe("numbers_fr_tiny")))
    (root / "a_file").write_text("not a folder\n")
    (root / "bad.json").write_text('{"model": {"arch": ')
    for name, change in (("zero_length.json", {"model": {"max_source_length": 0}}),
                         ("negative_batch.json", {"training": {"batch_size": -4}})):
        (root / name).write_text(json.dumps(zoo.merge(zoo.load_recipe("numbers_fr_tiny"),
                                                      change)))
    torn = root / "torn"
    torn.mkdir()
    data = (root / "model" / "model.keras").read_bytes()
    (torn / "model.keras").write_bytes(data[:3190])
    return root


def cli_rows(root):
    model, run, a_file = str(root / "model"), str(root / "run"), str(root / "a_file")
    return [
        (["train", "numbers_fr_tiny", "--output", run, "--epochs", "0"], "--epochs"),
        (["train", "numbers_fr_tiny", "--output", run, "--epochs", "-1"], "--epochs"),
        (["train", "numbers_fr_tiny", "--output", run, "--minutes", "-1"], "--minutes"),
        (["train", "numbers_fr_tiny", "--output", run, "--minutes", "nan"], "--minutes"),
        (["train", "numbers_fr_tiny", "--output", run, "--save-every", "0"], "--save-every"),
        (["train", "numbers_fr_tiny", "--output", a_file], "--output"),
        # Root ignores permission bits; /proc refuses new folders even to root.
        (["train", "numbers_fr_tiny", "--output", "/proc/kseq-run", "--epochs", "1"],
         "/proc/kseq-run"),
        (["train", str(root / "bad.json"), "--output", run], "bad.json"),
        (["train", str(root / "zero_length.json"), "--output", run], "model.max_source_length"),
        (["train", str(root / "negative_batch.json"), "--output", run], "training.batch_size"),
        (["train", "numbers_fr_tiny", "--output", run, "--data", str(root / "missing.tsv")],
         "--data"),
        (["evaluate", model, "--data", "test", "--limit", "0"], "--limit"),
        (["evaluate", model, "--data", "test", "--limit", "-1"], "--limit"),
        (["evaluate", model, "--data", "nonsense"], "--data"),
        (["translate", model, "one", "--beam", "0"], "--beam"),
        (["translate", model, "one", "--n-best", "0"], "--n-best"),
        (["translate", model, "one", "--beam", "2", "--n-best", "3"], "--n-best"),
        (["translate", model, "one", "--beam", "2.5"], "--beam"),
        (["translate", model, "one", "--plot-attention", a_file], "--plot-attention"),
        (["translate", str(root / "torn"), "one"], "model.keras"),
        (["export", model, "--output", str(root / "export" / "m"), "--version", "0"],
         "--version"),
        (["export", model, "--output", str(root / "export" / "m"), "--version", "-3"],
         "--version"),
        (["export", model, "--output", str(root / "export" / "m"), "--beam", "0"], "--beam"),
        (["translate"], "model_dir"),
        (["nonsense"], "invalid choice"),
    ]


@pytest.mark.slow
def test_cli_bad_arguments_give_one_line_exit_2_and_change_nothing(workspace, capsys):
    before = snapshot(workspace)
    failures = []
    for argv, named in cli_rows(workspace):
        code = main(argv)
        captured = capsys.readouterr()
        lines = [line for line in captured.err.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("kseq: error:")]
        if code != 2 or len(errors) != 1 or named not in errors[0] or "Traceback" in captured.err:
            failures.append((argv, code, captured.err[-600:]))
    assert failures == []
    assert snapshot(workspace) == before
    assert not (workspace / "export").exists()


def test_failed_train_leaves_no_folder_and_keeps_an_existing_recipe(workspace, tmp_path, capsys):
    new = tmp_path / "new_run"
    assert main(["train", str(workspace / "negative_batch.json"), "--output", str(new)]) == 2
    assert not new.exists()  # no folder holding only recipe.json
    recipe_before = (workspace / "run" / "recipe.json").read_text()
    assert main(["train", str(workspace / "zero_length.json"),
                 "--output", str(workspace / "run")]) == 2
    assert (workspace / "run" / "recipe.json").read_text() == recipe_before
    capsys.readouterr()


@pytest.fixture(scope="module")
def model():
    """The shipped numbers model as `kseq translate numbers_fr_transformer` loads it."""
    from kseq.presets.catalog import load_preset_model

    return load_preset_model("numbers_fr_transformer")


@pytest.mark.parametrize("call, named", [
    (lambda m: m.translate(None), "texts"),
    (lambda m: m.translate(42), "texts"),
    (lambda m: m.translate(["a", None]), "texts[1]"),
    (lambda m: m.translate(["a"], beam_size=2.5), "beam_size"),
    (lambda m: m.translate(["a"], beam_size=0), "beam_size"),
    (lambda m: m.translate(["a"], beam_size=True), "beam_size"),
    (lambda m: m.translate(["a"], batch_size=-1), "batch_size"),
    (lambda m: m.translate(["a"], batch_size=0), "batch_size"),
    (lambda m: m.translate(["a"], max_length=0), "max_length"),
    (lambda m: m.translate(["a"], max_length=10_000), "max_length"),
    (lambda m: m.translate(["a"], alpha=math.nan), "alpha"),
    (lambda m: m.translate(["a"], n_best=0), "n_best"),
    (lambda m: m.translate(["a"], beam_size=2, n_best=3), "n_best"),
    (lambda m: m.translate(["a"], length_penalty="linear"), "length_penalty"),
    (lambda m: m.translate(["a"], sampling=True, temperature=0.0), "temperature"),
    (lambda m: m.translate(["a"], sampling=True, top_p=1.5), "top_p"),
    (lambda m: m.translate(["a"], min_length=-1), "min_length"),
    (lambda m: m.evaluate_bleu([("a", None)]), "pairs[0]"),
    (lambda m: m.evaluate_bleu([]), "0 pairs"),
])
@pytest.mark.slow
def test_api_bad_arguments_raise_one_line_naming_them(model, call, named):
    with pytest.raises(KseqError) as caught:
        call(model)
    message = str(caught.value)
    assert named in message and "Received:" in message and "\n" not in message


@pytest.mark.parametrize("kwargs, named", [
    ({"epochs": 0}, "epochs"), ({"epochs": -1}, "epochs"), ({"minutes": -1}, "minutes"),
    ({"minutes": 0}, "minutes"), ({"save_every_steps": 0}, "save_every_steps"),
    ({"epochs": 1.5}, "epochs"),
])
def test_train_api_checks_its_arguments_before_writing(tmp_path, kwargs, named):
    with pytest.raises(KseqError, match=named):
        train("numbers_fr_tiny", str(tmp_path / "run"), **kwargs)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_invalid_text_becomes_replacement_characters_not_a_failed_batch(model, capsys,
                                                                        monkeypatch):
    # A lone surrogate is its three surrogatepass bytes, each replaced in the graph: U+FFFD x 3.
    outputs = model.translate(["four", "forty\ud800two", "forty\ufffd\ufffd\ufffdtwo",
                               b"\xff\xfeseven"], beam_size=1)
    assert outputs[0] == "quatre" and outputs[1] == outputs[2] and isinstance(outputs[3], str)
    # One invalid UTF-8 line on stdin: every line is translated, the batch survives.
    stdin = io.TextIOWrapper(io.BytesIO(b"four\n\xff\xfe bad line\nseven\n"), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    # The command resolves the preset name to the module's model (already loaded, its greedy
    # search traced): the point here is the stdin line, not a second load.
    load_presets_once(monkeypatch, {"numbers_fr_transformer": model})
    assert main(["translate", "numbers_fr_transformer", "--beam", "1"]) == 0  # a preset name
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0] == "quatre" and lines[2] == "sept"
