import json

import pytest

from kseq.cli import main


def test_presets_lists_names_with_task_and_architecture(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # every column (80, a pipe's default, drops some)
    assert main(["presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["preset", "task", "arch"]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
    assert rows["numbers_fr_tiny"] == ["translator", "transformer"]
    assert rows["libreoffice_en_fr_conv"] == ["translator", "conv"]
    weights = {line.split()[0]: line.split()[3] for line in lines[1:]}
    assert weights["emoji_en_captioner"] == "1.8MB" and weights["numbers_fr_tiny"] == "-"
    # The domain, a padded column of several words, between the one-word ones and the text.
    assert lines[0].split()[4:6] == ["domain", "description"]
    start, end = lines[0].index("domain"), lines[0].index("description")
    domains = {line.split()[0]: line[start:end].strip() for line in lines[1:]}
    assert domains["libreoffice_en_fr_conv"] == "LibreOffice UI and help text"
    assert domains["kanji_radical_classifier"] == "kanji glyphs (IPA Gothic)"
    assert "-" not in domains.values()  # every shipped recipe says its domain


def test_presets_json_has_the_domain(capsys):
    assert main(["presets", "--json"]) == 0
    rows = {row["preset"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["sms_spam_classifier"]["domain"] == "SMS messages"
    assert list(rows["numbers_fr_tiny"]) == ["preset", "task", "arch", "weights", "domain",
                                             "description"]


def test_clear_errors_without_tracebacks(tmp_path, capsys):
    assert main(["translate", str(tmp_path / "missing"), "one"]) == 2
    err = capsys.readouterr().err
    assert "kseq: error: No such model folder or .keras file" in err and "Traceback" not in err
    assert main(["train", "no_such_preset", "--output", str(tmp_path / "x")]) == 2
    assert "numbers_fr_tiny" in capsys.readouterr().err


@pytest.mark.slow
def test_a_run_remembers_its_data_file(tmp_path, capsys, monkeypatch):
    from kseq import zoo
    from kseq.data import numbers_dataset

    pairs = numbers_dataset("fr", train_size=300, valid_size=0, test_size=0)["train"]
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps(zoo.merge(zoo.load_recipe("numbers_fr_tiny"), {
        # No BLEU each epoch (bleu_subset 0): its greedy search (a trace) checks nothing here.
        "training": {"boundaries": [32], "bleu_subset": 0}})))
    run = tmp_path / "run"
    assert main(["train", str(recipe), "--data", str(data), "--output", str(run),
                 "--epochs", "1"]) == 0
    assert json.loads((run / "data_source.json").read_text())["path"] == str(data)

    # `evaluate --data test` scores the file's test split, never the preset's builder.
    monkeypatch.setattr(zoo, "build_data", lambda recipe: pytest.fail("used the builder"))
    assert main(["evaluate", str(run), "--data", "test", "--beam", "1"]) == 0
    assert "nrefs:1|case:mixed" in capsys.readouterr().out

    # Resuming or continuing on other data is refused, naming both sources.
    other = tmp_path / "other.tsv"
    other.write_text("one\tun\n", encoding="utf-8")
    before = (run / "model.keras").read_bytes()
    assert main(["train", str(recipe), "--data", str(other), "--output", str(run)]) == 2
    error = capsys.readouterr().err
    assert "was trained on --data" in error and str(other) in error
    data.write_text("changed\tchangé\n", encoding="utf-8")
    assert main(["train", str(recipe), "--output", str(run)]) == 2
    assert "has changed since" in capsys.readouterr().err
    assert (run / "model.keras").read_bytes() == before
