"""The options users reach for and the behaviour they expect from `kseq` (issue 31).

In-process through `kseq.cli.main(argv)` (the shipped preset loaded once for the module:
`testing.load_presets_once`): every option has help and a place in the
README's table; mistakes give one line, exit 2 and change no file; search and
output options on the shipped `numbers_fr_transformer`; `train --set` and friends
recorded in `recipe.json`, with the `--minutes` stop saying how to continue; an
image classifier that skips the files it cannot read.
"""

import argparse
import json
import os
import re

import pytest

from kseq import cli
from kseq.cli import build_parser, main
from testing import load_presets_once

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESET = "numbers_fr_transformer"  # shipped weights: loads in a second, no training
TINY = "numbers_fr_tiny"  # what the train rows name: were a check to miss, seconds of training
# The preset loaded once for the module's commands (their point is the options, not the
# loading, which the first of them still does): a load builds the model, ~3 s.
LOADED = {}


def commands():
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def options(parser):
    return [string for action in parser._actions for string in action.option_strings
            if string.startswith("--") and string != "--help"]


def test_every_option_and_argument_has_help():
    parsers = {"kseq": build_parser(), **commands()}
    missing = [f"{name} {action.dest}" for name, parser in parsers.items()
               for action in parser._actions
               if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
               and not (action.help or "").strip()]
    assert not missing


def test_the_readme_table_shows_every_option():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        section = handle.read().split("## The `kseq` command", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w-]+)` \|.*$", section, re.M)}
    assert set(rows) == set(commands())
    common = {"--verbose", "--quiet"}  # every command's: named once, before the table
    for option in common | {"--version"}:
        assert option in section.split("| command |")[0], option
    for name, parser in commands().items():
        absent = [o for o in options(parser) if o not in common
                  and not re.search(rf"`{re.escape(o)}[ `=/]", rows[name])]
        assert not absent, (name, absent)


def test_the_preset_listing_names_architectures_as_the_tasks_do():
    from kseq import zoo
    from kseq.presets.catalog import presets
    from kseq.presets.listing import architecture, preset_rows

    recipes = [zoo.load_recipe(name) for name in presets()]
    recipes += [task.default_recipe(arch) for task in zoo.TASKS.values()
                for arch in task.architectures]
    assert len(recipes) > len(presets()) + 8
    for recipe in recipes:
        assert architecture(recipe) == zoo.describe(recipe), recipe
    assert [row["preset"] for row in preset_rows()] == presets()


def test_the_written_out_choices_are_the_librarys():
    from kseq.decoding.length_penalty import LENGTH_PENALTIES

    (penalty,) = [a for a in commands()["translate"]._actions if a.dest == "length_penalty"]
    assert set(penalty.choices) == {str(p).lower() for p in LENGTH_PENALTIES}
    assert set(cli.RECIPE_SECTIONS) >= {"data", "tokenizer", "model", "training"}


# (argv, a piece of the one error line). Each fails before a model loads or a file is written.
MISTAKES = [
    (["translate", PRESET, "x", "--n-best", "3", "--beam", "2"], "--n-best must be <= --beam"),
    (["translate", PRESET, "x", "--alpha", "nan"], "--alpha"),
    (["translate", PRESET, "x", "--max-length", "0"], "--max-length"),
    (["translate", PRESET, "x", "--length-penalty", "wu"], "--length-penalty"),
    (["caption", PRESET, "a.png", "--beam", "0"], "--beam"),
    (["classify", PRESET, "x", "--top-k", "0"], "--top-k"),
    (["train", TINY, "--output", "{out}", "--set", "epochs"], "--set"),
    (["train", TINY, "--output", "{out}", "--set", "trainig.epochs=3"], "trainig.epochs"),
    (["train", TINY, "--output", "{out}", "--batch-size", "0"], "--batch-size"),
    (["train", TINY, "--output", "{out}", "--learning-rate", "-1"], "--learning-rate"),
    (["train", TINY, "--output", "{out}", "--seed", "-1"], "--seed"),
    (["train", TINY, "--output", "{out}", "--set", "training.batch_size=-4"],
     "training.batch_size"),
    (["train", TINY, "--output", "{out}", "--set", "model.dropout=1.5"], "model.dropout"),
    (["train", TINY, "--output", "{out}", "--set", "training.batch_size=8", "--set",
      "training.token_budget=512"], "not both"),
    # issue 50: a section's type checked before the merge, lengths bounded, null named, ...
    (["train", TINY, "--output", "{out}", "--set", "model=3"], "`model` must be a JSON object"),
    (["train", TINY, "--output", "{out}", "--set", "training.boundaries=null"],
     "`training.boundaries` must be a non-empty list"),
    (["train", TINY, "--output", "{out}", "--set", "model.max_source_length=2000000000"],
     "`model.max_source_length` must be an integer >= 1 and <= 65536"),
    (["train", TINY, "--output", "{out}", "--set", "model.dropout=null"],
     "`model.dropout` must be a finite number"),
    (["train", TINY, "--output", "{out}", "--data", "{out}/pairs.tsv", "--columns",
      "english,english"], "two different header columns"),
    # ... and a bucket too short for most examples (the corpus is prepared, nothing trains)
    pytest.param(["train", TINY, "--output", "{out}", "--set", "training.boundaries=[2]"],
                 "386 of 400 training examples are longer than the longest bucket (2 tokens)",
                 marks=pytest.mark.slow),
    (["train", "numbers_fr_tin", "--output", "{out}"], "close presets: numbers_fr_tiny"),
    (["train", "{out}/recipe.json", "--output", "{out}"], "No such recipe file"),
    (["translate", "libreoffice_en_fr", "Hello"], "close presets: libreoffice_en_fr_attention"),
    (["translate", "{out}/run", "Hello"], "No such model folder or .keras file"),
    (["translate", PRESET, "x", "--output", "{out}"], "--output must name a file"),
    (["tag", PRESET, "x", "--output", "{out}/no/such/file.txt"], "--output's folder"),
    (["presets", "--verbose", "--quiet"], "exclude each other"),
]


@pytest.mark.parametrize("argv, expected", MISTAKES)
def test_mistakes_are_one_line_exit_2_and_change_no_file(argv, expected, tmp_path, capsys,
                                                         tmp_path_factory, monkeypatch):
    # A row that prepares its corpus does it in a home of its own (a cache from another kseq
    # version must not decide the row).
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path_factory.mktemp("home")))
    argv = [arg.replace("{out}", str(tmp_path)) for arg in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("kseq: error: ") and expected in line, line
    assert captured.out == "" and os.listdir(tmp_path) == []


@pytest.mark.slow
def test_evaluate_refuses_options_its_task_does_not_take(tmp_path, capsys, monkeypatch):
    load_presets_once(monkeypatch, LOADED)
    data = tmp_path / "pairs.tsv"
    data.write_text("forty-two\tquarante-deux\n", encoding="utf-8")
    assert main(["evaluate", PRESET, "--data", str(data), "--plot", str(tmp_path / "c.png")]) == 2
    assert "Translator takes no --plot" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["pairs.tsv"]


@pytest.mark.slow
def test_search_and_output_options_reach_the_search(tmp_path, capsys, monkeypatch):
    load_presets_once(monkeypatch, LOADED)
    assert main(["translate", PRESET, "forty-two", "nine hundred", "--beam", "3", "--n-best",
                 "2", "--scores"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in rows] == ["quarante-deux", "neuf cents"]
    assert all(len(row) == 4 and float(row[1]) >= float(row[3]) for row in rows)

    output = tmp_path / "out.jsonl"
    assert main(["translate", PRESET, "forty-two", "nine hundred", "--beam", "1",
                 "--max-length", "1", "--length-penalty", "none", "--alpha", "0.3", "--json",
                 "--output", str(output)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"wrote 2 lines to {output}" in captured.err
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["input"] for r in records] == ["forty-two", "nine hundred"]
    assert [r["text"] for r in records] == [["quarante"], ["neuf"]]  # one token each
    assert all(len(r["score"]) == 1 and r["score"][0] < 0 for r in records)


@pytest.mark.slow
def test_evaluate_writes_the_full_report_on_request(tmp_path, capsys, monkeypatch):
    """(Without --json a single summary line: tests/test_cli_classifier.py, _captioner.py.)"""
    load_presets_once(monkeypatch, LOADED)
    data = tmp_path / "pairs.tsv"
    data.write_text("forty-two\tquarante-deux\nnine\tneuf\n", encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["evaluate", PRESET, "--data", str(data), "--beam", "2", "--alpha", "1.0",
                 "--json", "--output", str(report), "--quiet"]) == 0
    captured = capsys.readouterr()
    written = json.loads(report.read_text())
    assert json.loads(captured.out) == written and captured.err == ""  # --quiet: no note
    assert written["summary"].startswith("BLEU ") and written["exact_match"] == 1.0
    assert written["summary"].endswith(f"(2 pairs) | {written['bleu_signature']}")


@pytest.mark.slow  # one tiny training step: ~10 s
def test_train_records_its_options_and_a_budget_stop_says_how_to_continue(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "numbers_fr_tiny", "--output", str(run), "--minutes", "0.0001",
                 "--batch-size", "8", "--learning-rate", "0.002", "--seed", "7",
                 "--set", "data.train_size=64", "--set", "data.valid_size=4",
                 "--set", "data.test_size=4", "--set", "training.bleu_subset=0",
                 "--set", "model.dropout=0.1", "--set", "training.boundaries=[16,32]"]) == 0
    recipe = json.loads((run / "recipe.json").read_text())
    training = recipe["training"]
    assert (training["batch_size"], training["token_budget"]) == (8, None)
    assert (training["peak_learning_rate"], training["seed"]) == (0.002, 7)
    assert training["boundaries"] == [16, 32] and recipe["model"]["dropout"] == 0.1
    assert recipe["data"]["train_size"] == 64
    assert (run / "model.keras").is_file()
    captured = capsys.readouterr()
    assert f"saved {run / 'model.keras'}" in captured.out
    (note,) = [line for line in captured.err.splitlines() if "budget" in line]
    assert re.search(r"budget stopped training in epoch 1 of 2 \(step \d+\); to continue to "
                     r"epoch 2: kseq train numbers_fr_tiny --output \S+ --epochs 1$", note), note


@pytest.mark.slow  # an untrained image classifier saved and loaded: ~8 s
def test_image_classify_takes_each_file_on_its_own(tmp_path, capsys):
    from image_classifier_fixtures import EXAMPLES, build

    model_path = tmp_path / "shapes.keras"
    build().save(str(model_path))
    good = tmp_path / "good.png"
    good.write_bytes(EXAMPLES[0][0])
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n cut")
    files = [str(tmp_path / "missing.png"), str(good), str(tmp_path / "bad.png")]
    assert main(["classify", str(model_path), *files, "--top-k", "2"]) == 1
    captured = capsys.readouterr()
    (row,) = [line.split("\t") for line in captured.out.splitlines()]
    assert row[0] == str(good) and len(row) == 5
    warnings = captured.err.splitlines()
    assert len(warnings) == 2 and "missing.png" in warnings[0] and "bad.png" in warnings[1]
    assert all(line.startswith("kseq: warning: skipped ") for line in warnings)


def test_the_budget_note_names_a_target_only_when_the_stopped_call_had_it():
    args = argparse.Namespace(recipe="r.json", output="runs/my run", minutes=2.5)
    assert cli._budget_note(args, (3, 120, 10)) == (
        "the 2.5-minute budget stopped training in epoch 4 of 10 (step 120); to continue to "
        "epoch 10: kseq train r.json --output 'runs/my run' --epochs 6")
    # A resumed run's first `fit` call only finishes its cut epoch: its end is not the target.
    assert cli._budget_note(args, (3, 120, 4)) == (
        "the 2.5-minute budget stopped training in epoch 4 (step 120); to finish epoch 4 and "
        "train N more: kseq train r.json --output 'runs/my run' --epochs N")


def test_quiet_ends_with_its_command(capsys):
    # main() is also called in-process (tests, notebooks): a --quiet command's ERROR level
    # on the kseq logger would silence the warnings of every later call in that process.
    import logging

    logger = logging.getLogger("kseq")
    before = logger.level
    assert main(["presets", "--quiet"]) == 0
    assert logger.level == before
    capsys.readouterr()
