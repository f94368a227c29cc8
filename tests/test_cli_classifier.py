"""`kseq train / classify / evaluate / export` on a classifier recipe and a text<TAB>label file.

Commands run in-process through `kseq.cli.main(argv)`; the commands after `train` on one
run folder share the model the first of them loads (`testing.load_presets_once`: loading
a folder builds its model, and each load traces its functions anew; that is not what these
tests check).
"""

import gzip
import json
import os

import pytest

from classifier_fixtures import EXAMPLES, make_examples
from kseq.cli import main
from testing import load_presets_once

pytestmark = pytest.mark.slow  # one tiny training run: ~15 s

LOADED = {}  # run folder or preset name -> the model its first command loaded

# Every validation and test example is scored right from the first epoch on (loss 0.003
# after the third): 2 epochs (4 before, 10 and 30 before that), each about a second.
RECIPE = {"task": "classifier", "tokenizer": {"kind": "word"},
          "model": {"encoder": "rnn", "pooling": "attention", "hidden_dim": 16,
                    "max_length": 16, "dropout": 0.0},
          "training": {"epochs": 2, "boundaries": [16], "batch_size": 16,
                       "peak_learning_rate": 0.01, "warmup_steps": 10, "label_smoothing": 0.0}}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    (folder / "recipe.json").write_text(json.dumps(RECIPE))
    lines = [f"{text}\t{label}\n" for text, label in make_examples(300, seed=1)]
    for part, half in enumerate((lines[:150], lines[150:])):  # a glob of two gzip shards
        with gzip.open(folder / f"pairs-{part}.tsv.gz", "wt", encoding="utf-8") as handle:
            handle.writelines(half)
    run = str(folder / "run")
    assert main(["train", str(folder / "recipe.json"), "--data",
                 str(folder / "pairs-*.tsv.gz"), "--output", run]) == 0
    return run


def test_classify_prints_label_and_probability(trained, tmp_path, capsys,
                                               monkeypatch):
    import io

    load_presets_once(monkeypatch, LOADED, folders=[trained])
    capsys.readouterr()
    texts = [text for text, _ in EXAMPLES[:3]]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(texts + [""]) + "\n"))
    assert main(["classify", trained, "--top-k", "2"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in rows[:3]] == [label for _, label in EXAMPLES[:3]]
    assert all(len(row) == 4 and float(row[1]) >= float(row[3]) for row in rows[:3])
    assert rows[3] == ["", "0.0000", "", "0.0000"]  # an empty line has no label
    output = tmp_path / "labels.jsonl"
    assert main(["classify", trained, *texts, "--top-k", "2", "--json", "--output",
                 str(output)]) == 0
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [record["input"] for record in records] == texts
    assert [record["label"] for record in records] == [[row[0], row[2]] for row in rows[:3]]
    assert all(abs(r["probability"][0] - float(row[1])) < 1e-4 for r, row in zip(records, rows))


def test_training_logs_validation_accuracy_each_epoch(trained):
    rows = [line.split(",") for line in open(os.path.join(trained, "history.csv"))
            .read().splitlines()]
    column = rows[0].index("val_accuracy")  # beside Keras's loss: the progress line's too
    accuracy = [float(row[column]) for row in rows[1:]]
    assert len(accuracy) == RECIPE["training"]["epochs"]
    assert all(0.0 <= value <= 1.0 for value in accuracy) and accuracy[-1] > 0.9


def test_evaluate_reports_f1_and_draws_the_confusion_matrix(trained, tmp_path, capsys,
                                                            monkeypatch):
    load_presets_once(monkeypatch, LOADED, folders=[trained])
    capsys.readouterr()
    plot = str(tmp_path / "confusion.png")
    report = tmp_path / "report.json"
    assert main(["evaluate", trained, "--data", "test", "--plot", plot,
                 "--output", str(report)]) == 0
    (summary,) = capsys.readouterr().out.splitlines()  # the headline only; the rest in FILE
    scores = json.loads(report.read_text())
    assert scores["summary"] == summary
    assert summary == (f"accuracy {scores['accuracy']:.3f} macro-F1 {scores['macro_f1']:.3f} "
                       f"({scores['examples']} examples)")
    assert scores["accuracy"] > 0.9 and set(scores["per_class"]) == {"negative", "neutral",
                                                                      "positive"}
    assert os.path.getsize(plot) > 1000


def test_a_keras_file_is_a_model_too(trained, capsys, monkeypatch):
    """`RUN/model.keras` where a command takes a model (issue 49 item 7): `classify`, and
    `evaluate --data test`, which reads the split of the file's run folder."""
    keras_file = os.path.join(trained, "model.keras")
    load_presets_once(monkeypatch, LOADED, folders=[trained, keras_file])
    capsys.readouterr()
    assert main(["evaluate", trained, "--data", "test"]) == 0
    by_folder = capsys.readouterr().out
    assert main(["evaluate", keras_file, "--data", "test"]) == 0
    assert capsys.readouterr().out == by_folder
    assert main(["classify", keras_file, EXAMPLES[0][0]]) == 0
    assert capsys.readouterr().out.split("\t")[0] == EXAMPLES[0][1]


def test_export_and_wrong_commands(trained, tmp_path, capsys, monkeypatch):
    load_presets_once(monkeypatch, LOADED, folders=[trained])
    assert main(["export", trained, "--output", str(tmp_path / "serving" / "sentiment")]) == 0
    assert os.path.isfile(tmp_path / "serving" / "sentiment" / "1" / "saved_model.pb")
    assert main(["translate", trained, "one"]) == 2
    assert "SequenceClassifier" in capsys.readouterr().err
    assert main(["classify", str(tmp_path / "missing"), "x"]) == 2


def test_kseq_trains_tags_and_evaluates_a_tagger(tmp_path, capsys, monkeypatch):
    import io

    from tagger_fixtures import make_examples

    # Two epochs: the checks read the words and the empty line back, not the tags' accuracy.
    recipe = {"task": "tagger", "tokenizer": {"kind": "char"},
              "model": {"encoder": "rnn", "hidden_dim": 24, "max_length": 48, "dropout": 0.0},
              "training": {"epochs": 2, "boundaries": [48], "batch_size": 16,
                           "peak_learning_rate": 0.01, "warmup_steps": 10,
                           "label_smoothing": 0.0}}
    (tmp_path / "recipe.json").write_text(json.dumps(recipe))
    lines = [f"{s}\t{t}\n" for s, t in make_examples(300, seed=3)]
    (tmp_path / "tagged").mkdir()
    for part, half in enumerate((lines[:150], lines[150:])):  # a folder of two gzip shards
        with gzip.open(tmp_path / "tagged" / f"{part}.tsv.gz", "wt", encoding="utf-8") as handle:
            handle.writelines(half)
    run = str(tmp_path / "run")
    assert main(["train", str(tmp_path / "recipe.json"), "--data", str(tmp_path / "tagged"),
                 "--output", run]) == 0
    assert "validation token accuracy " in capsys.readouterr().out  # the epoch line
    header = open(os.path.join(run, "history.csv")).readline().strip().split(",")
    assert "val_token_accuracy" in header
    # One load for the four commands below; one of its model.keras for the last check.
    load_presets_once(monkeypatch, {}, folders=[run, os.path.join(run, "model.keras")])
    monkeypatch.setattr("sys.stdin", io.StringIO("bokar lumi\n\n"))
    assert main(["tag", run]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1] == ""  # an empty line: no words, no tags
    assert [item.split("/")[0] for item in lines[0].split()] == ["bokar", "lumi"]
    assert all(item.split("/")[1] in ("ADJ", "NOUN", "PART", "VERB") for item in lines[0].split())
    assert main(["tag", run, "bokar lumi", "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["input"] == "bokar lumi" and row["words"] == ["bokar", "lumi"]
    assert len(row["tags"]) == 2
    assert main(["evaluate", run, "--data", "test"]) == 0
    (summary,) = capsys.readouterr().out.splitlines()  # 300+ lines of JSON only with --json
    assert summary.startswith("token accuracy ") and summary.endswith(" sentences)")
    assert main(["evaluate", run, "--data", "test", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["token_accuracy"] > 0.9
    check_one_truncation_warning(os.path.join(run, "model.keras"), capsys, monkeypatch)


def check_one_truncation_warning(keras_file, capsys, monkeypatch):
    """`kseq tag FILE.keras` on 300 sentences over `max_length` (48 characters), read as a
    stream of two chunks (256 lines, then 44): one warning for all of them (issue 49 item
    7; it was one a chunk), and the API's `tag` one a call, not one a batch."""
    import io
    import logging

    long = " ".join(["bokar", "lumi"] * 6)  # 65 characters
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{long}\n" * 300))
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("kseq").addHandler(handler)
    try:
        assert main(["tag", keras_file]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 300
        cut = [record.getMessage() for record in records if "were cut" in record.getMessage()]
        assert cut == ["300 sentence(s) longer than max_length=48 characters were cut."]
        from kseq.training import load_trained

        load_trained(keras_file).tag([long] * 4, batch_size=2)
        assert len([r for r in records if "were cut" in r.getMessage()]) == 2
    finally:
        logging.getLogger("kseq").removeHandler(handler)


def test_classify_and_tag_take_a_shipped_preset_by_name(capsys):
    capsys.readouterr()
    assert main(["classify", "sms_spam_classifier", "see you at 6 for dinner?",
                 "WINNER!! You have won a £1000 prize. Call 09061701461 to claim now"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in rows] == ["ham", "spam"]
    assert all(0.5 < float(row[1]) <= 1.0 for row in rows)
    assert main(["classify", "trec_classifier", "Who wrote Hamlet ?"]) == 0
    assert capsys.readouterr().out.split("\t")[0] == "HUM"
    assert main(["tag", "turkish_pos_tagger", "Bu kitap çok güzel ."]) == 0
    tagged = capsys.readouterr().out.split()
    assert len(tagged) == 5 and tagged[-1].endswith("PUNCT"), tagged
