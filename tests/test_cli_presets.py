"""`kseq presets` (issue 49 item 7): a table as wide as the terminal (`COLUMNS`, 80 for a
pipe), one preset's card, `--parts` from a listing that needs no TensorFlow (checked here
against the part catalog; `test_cli_startup.py` checks the imports), and a reader that
goes away (`| head -1`) ends the command quietly; and the API's unknown-preset error names
the close presets as the command does. No model is loaded.
"""

import json
import os
import subprocess
import sys

import pytest

from kseq.cli import main
from kseq.cli.part_listing import PARTS, part_rows
from kseq.presets.catalog import presets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("columns, headers", [
    (None, ["preset", "task", "weights", "description"]),  # no terminal, no COLUMNS: 80
    ("80", ["preset", "task", "weights", "description"]),
    ("120", ["preset", "task", "arch", "weights", "description"]),
    ("250", ["preset", "task", "arch", "weights", "domain", "description"])])
def test_the_table_fits_the_terminal(columns, headers, capsys, monkeypatch):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= int(columns or 80)
    assert lines[0].split() == headers
    assert [line.split()[0] for line in lines[1:]] == presets()  # every preset, name uncut
    assert any(line.endswith("...") for line in lines)  # long descriptions cut to fit


def test_a_preset_card(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["presets", "sms_spam_classifier"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    labels = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert labels == ["preset", "task", "description", "domain", "data", "tokenizer", "model",
                      "training", "weights", "scores"]
    assert 'builder="sms_spam"' in out and "epochs=6" in out
    assert "accuracy 1.0, macro_f1 1.0 on 200 test" in out and "4.2 MB, float16" in out
    assert main(["presets", "numbers_fr_tiny"]) == 0  # no weights: how to train it
    assert "none shipped: kseq train numbers_fr_tiny --output DIR" in capsys.readouterr().out
    assert main(["presets", "libreoffice_fr_transformer", "--json"]) == 0  # an old name
    entry = json.loads(capsys.readouterr().out)
    assert entry["preset"] == "libreoffice_en_fr_transformer"
    assert entry["weights"]["slice_200"]["greedy_bleu"] > 0
    assert main(["presets", "sms_spam"]) == 2
    assert "close presets: sms_spam_classifier" in capsys.readouterr().err


def test_the_parts_listing_is_the_part_catalog(capsys, monkeypatch):
    """`kseq.cli.part_listing` is written from the catalog (`python -m kseq.cli.part_listing`
    writes it anew after a part changes)."""
    from kseq.models import part_catalog

    assert PARTS == part_rows(part_catalog.parts()), "python -m kseq.cli.part_listing"
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["presets", "--parts"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert [line.split()[0] for line in lines[1:] if not line.startswith(" ")] == [
        name for name, *_ in PARTS]


def test_a_closed_pipe_ends_it_quietly():
    """The reader is gone before the command writes (what `| head -1` does to the rest)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "kseq.cli", "presets"], cwd=ROOT,
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode == 1


def test_the_api_names_the_close_presets_as_the_command_does():
    from kseq import zoo
    from kseq.errors import KseqError

    with pytest.raises(KseqError, match="close presets: numbers_fr_transformer") as raised:
        zoo.translator("numbers_fr_transfomer")
    assert "sms_spam_classifier" not in str(raised.value)  # not the whole list
    with pytest.raises(KseqError, match="expected one of .*sms_spam_classifier"):
        zoo.classifier("zzz")  # nothing close: every preset
