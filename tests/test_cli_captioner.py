"""`kseq train / caption / evaluate / export` on a captioner recipe, in-process."""

import gzip
import io
import json
import os

import pytest

from captioner_fixtures import EXAMPLES, overfit_captioner  # noqa: F401
from kseq.cli import main
from testing import load_presets_once

pytestmark = pytest.mark.slow  # one tiny training run and the shared captioner: ~40 s


@pytest.fixture(scope="module")
def trained(overfit_captioner, tmp_path_factory):
    """A run folder as `kseq train` leaves it, holding the shared overfit captioner.

    `caption`, `evaluate` and `export` read only `model.keras` and `recipe.json`
    (the preset's recipe, data cut to the 5 test scenes `evaluate` scores), so
    they reuse the captioner the other captioner tests train; `kseq train` on a
    captioner recipe is `test_train_from_image_paths_with_a_frozen_backbone`.
    The commands load the folder once (`testing.load_presets_once`).
    """
    from kseq import zoo

    run = tmp_path_factory.mktemp("runs") / "shapes"
    run.mkdir()
    recipe = zoo.merge(zoo.load_recipe("shapes_captioner_tiny"),
                       {"data": {"train_size": 16, "valid_size": 0, "test_size": 5}})
    (run / "recipe.json").write_text(json.dumps(recipe))
    overfit_captioner.save(str(run / "model.keras"))
    with pytest.MonkeyPatch.context() as patch:
        load_presets_once(patch, {}, folders=[str(run)])
        yield str(run)


def test_caption_prints_one_line_per_image(trained, tmp_path, capsys):
    from kseq.data.datasets.shapes_captions import shapes_captions

    paths = []
    for index, (png, _) in enumerate(shapes_captions(2, 0, 0, image_size=32, seed=9)["train"]):
        paths.append(str(tmp_path / f"{index}.png"))
        with open(paths[-1], "wb") as handle:
            handle.write(png)
    capsys.readouterr()
    assert main(["caption", trained, *paths, "--beam", "2", "--n-best", "2",
                 "--plot-attention", str(tmp_path / "plots")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == paths
    assert all(len(line.split("\t")[1].split(" ||| ")) == 2 for line in lines)
    assert sorted(os.listdir(tmp_path / "plots")) == ["0000.png", "0001.png"]


def test_caption_takes_each_file_on_its_own(trained, tmp_path, capsys, monkeypatch):
    """Every readable image gets its caption; each bad file one warning naming it; exit 1;
    likewise for paths read from stdin."""
    junk, notes, missing = tmp_path / "junk.png", tmp_path / "notes.txt", tmp_path / "gone.png"
    junk.write_bytes(b"nope")
    notes.write_text("not an image\n")
    good = [tmp_path / "good0.png", tmp_path / "good1.png"]
    for path, (png, _) in zip(good, EXAMPLES):
        path.write_bytes(png)
    files = [str(good[0]), str(junk), str(notes), str(good[1]), str(missing)]
    output = tmp_path / "captions.jsonl"
    assert main(["caption", trained, *files, "--beam", "2", "--json",
                 "--output", str(output)]) == 1
    *warnings, note = capsys.readouterr().err.splitlines()
    assert note == f"wrote 2 lines to {output}"
    assert len(warnings) == 3 and all(line.startswith("kseq: warning: skipped ")
                                      for line in warnings)
    # A missing file is said before the model loads; the others when they are decoded.
    assert all(name in line for line, name in zip(warnings, ("gone.png", "junk.png",
                                                             "notes.txt")))
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [row["input"] for row in rows] == [str(good[0]), str(good[1])]
    assert all(len(row["text"]) == len(row["score"]) == 1 for row in rows)
    assert main(["caption", trained, str(junk)]) == 1  # nothing readable: still one line each
    assert len(capsys.readouterr().err.splitlines()) == 1
    # The same paths on stdin (a stream, as `translate` reads it): the same lines and exit.
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{path}\n" for path in files)))
    assert main(["caption", trained, "--beam", "2", "--json"]) == 1
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows


def test_caption_errors_are_one_line(trained, tmp_path, capsys):
    assert main(["translate", trained, "one"]) == 2
    assert "Captioner" in capsys.readouterr().err
    good = tmp_path / "good.png"
    good.write_bytes(EXAMPLES[0][0])
    assert main(["caption", trained, str(good), "--language", "fr"]) == 2  # one language
    assert "captions in one language only" in capsys.readouterr().err


def test_evaluate_prints_one_line_and_writes_the_report(trained, tmp_path, capsys):
    """`kseq export` of this run folder (a captioner): tests/export/test_captioner_export.py,
    whose export is the command's, served in a fresh process."""
    capsys.readouterr()
    report = tmp_path / "report.json"
    assert main(["evaluate", trained, "--data", "test", "--beam", "1", "--limit", "5",
                 "--output", str(report)]) == 0
    (summary,) = capsys.readouterr().out.splitlines()  # one line; the report in --output
    scores = json.loads(report.read_text())
    assert set(scores) >= {"bleu", "chrf", "exact_match", "bleu_signature"}
    assert summary == scores["summary"] and summary.startswith("BLEU ")
    assert summary.endswith(f"(5 pairs) | {scores['bleu_signature']}")


def test_presets_show_the_captioner_architecture(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # the arch column too
    assert main(["presets"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["shapes_captioner_tiny", "captioner", "small_cnn+transformer"] in [r[:3] for r in rows]


def test_train_from_image_paths_with_a_frozen_backbone(tmp_path, monkeypatch):
    from kseq import zoo
    from kseq.data.datasets.shapes_captions import shapes_captions
    from kseq.models.captioner import Captioner

    recipe = zoo.merge(zoo.load_recipe("shapes_captioner_tiny"),
                       {"model": {"trainable_backbone": False},
                        # No BLEU each epoch: its greedy search (a trace) checks nothing here.
                        "training": {"epochs": 1, "bleu_subset": 0}})
    recipe.pop("data")
    (tmp_path / "recipe.json").write_text(json.dumps(recipe))
    (tmp_path / "images").mkdir()
    lines = []
    for index, (png, caption) in enumerate(shapes_captions(60, 0, 0, image_size=32)["train"]):
        (tmp_path / "images" / f"{index}.png").write_bytes(png)
        lines.append(f"images/{index}.png\t{caption}\n")  # relative to the TSV's folder
    for part, half in enumerate((lines[:30], lines[30:])):  # a glob of two gzip shards
        with gzip.open(tmp_path / f"pairs-{part}.tsv.gz", "wt", encoding="utf-8") as handle:
            handle.writelines(half)
    cached = []
    original = Captioner.training_examples
    monkeypatch.setattr(Captioner, "training_examples", lambda self, examples: cached.append(
        original(self, examples)) or cached[-1])
    assert main(["train", str(tmp_path / "recipe.json"), "--data",
                 str(tmp_path / "pairs-*.tsv.gz"), "--output", str(tmp_path / "run")]) == 0
    assert "features" in cached[0].element_spec[0]  # the backbone ran once per image
    history = (tmp_path / "run" / "history.csv").read_text().splitlines()
    assert float(history[1].split(",")[history[0].split(",").index("loss")]) > 0.1
    (tmp_path / "bad.tsv").write_text("images/missing.png\ta red circle\n")
    assert main(["train", str(tmp_path / "recipe.json"), "--data", str(tmp_path / "bad.tsv"),
                 "--output", str(tmp_path / "run2")]) == 2
