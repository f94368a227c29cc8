"""TSV and CSV user data with a header row and `--columns` (issue 31, item 2).

`kseq.data.read_table_rows` reads a `.csv` file with Python's `csv` module (header
row; `columns` picks the input and target by name, default the first two) and a
TSV file as before, or with a header row when `columns` is given. The run folder
records the columns, so a resume reads the same ones and other ones are refused;
`kseq train` refuses a bad column name in one line, exit 2, writing nothing. No test
here trains a model.
"""

import json
import os

import pytest

from kseq import models, zoo  # noqa: F401  (the tasks, registered)
from kseq.cli import main
from kseq.data import ParallelTextError, read_table_rows
from kseq.data.pipeline.parallel_text import read_tsv_rows
from kseq.errors import KseqError
from kseq.training import load_data
from kseq.training.run_folder import RunFolder

PRESET = "numbers_fr_tiny"  # its recipe only: no model is built or trained here


def write(path, text, encoding="utf-8"):
    with open(path, "w", encoding=encoding, newline="") as handle:
        handle.write(text)
    return str(path)


def one_line(error):
    text = str(error.value)
    assert "\n" not in text, text
    return text


def test_csv_quoted_fields_and_columns_picked_by_name(tmp_path):
    path = write(tmp_path / "pairs.csv", (
        "\ufeffid,english, french ,notes\r\n"           # a byte order mark, spaces in names
        '1,"one, two","un, deux",plain\r\n'
        '2,"a\ttab","une ""citation""",x\r\n'
        '3,"two\nlines","deux\r\nlignes",y\r\n'          # a row over three lines
        "4,four,quatre,z\r\n"))
    rows, skipped = read_table_rows(path, columns=("english", "french"))
    assert rows == [(2, "one, two", "un, deux"), (3, "a\ttab", 'une "citation"'),
                    (4, "two\nlines", "deux\r\nlignes"), (7, "four", "quatre")]
    assert not any(skipped.values())
    # No columns: the first two; the header is never a row. The suffix in any case.
    upper = write(tmp_path / "PAIRS.CSV", "en,fr\nsix,six\n")
    assert read_table_rows(upper)[0] == [(2, "six", "six")]
    with pytest.raises(ParallelTextError, match="looks like a row id"):  # id,label,text
        read_table_rows(path)
    assert read_table_rows(path, "notes,english")[0][0] == (2, "plain", "one, two")


def test_tsv_keeps_its_format_and_takes_a_header_with_columns(tmp_path):
    path = write(tmp_path / "pairs.tsv", "source\ttarget\none\tun\n")
    assert read_table_rows(path) == read_tsv_rows(path)  # no header: today's format
    assert read_table_rows(path)[0] == [(1, "source", "target"), (2, "one", "un")]

    wide = write(tmp_path / "wide.tsv", "id\tfr\ten\tnote\n1\tun\tone\ta, b\n2\tdeux\ttwo\t\n")
    rows, skipped = read_table_rows(wide, columns=("en", "fr"))
    assert rows == [(2, "one", "un"), (3, "two", "deux")] and not any(skipped.values())


@pytest.mark.parametrize("name, text", [
    ("pairs.csv", "english,french,notes\none,un,x\n"),
    ("pairs.tsv", "english\tfrench\tnotes\none\tun\tx\n"),
])
def test_an_unknown_column_is_one_line_listing_the_headers_names(tmp_path, name, text):
    path = write(tmp_path / name, text)
    with pytest.raises(ParallelTextError) as error:
        read_table_rows(path, columns=("english", "frnech"))
    line = one_line(error)
    assert line.startswith(f"{path}:1: ") and "'frnech'" in line
    assert "'english', 'french', 'notes'" in line and "--columns english,frnech" in line
    doubled = write(tmp_path / ("twice" + name[-4:]), text.replace("notes", "french"))
    with pytest.raises(ParallelTextError, match="2 columns named 'french'"):
        read_table_rows(doubled, columns=("english", "french"))
    with pytest.raises(ParallelTextError, match="two header columns"):
        read_table_rows(path, columns=("english",))


def test_ragged_empty_and_undecodable_rows_are_skipped_and_counted(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"en,fr\none,un\ntwo\nthree,trois,extra\n , quatre\n\xff\xfe,bad\n"
                     b"five,cinq\n")
    rows, skipped = read_table_rows(str(path))
    assert rows == [(2, "one", "un"), (7, "five", "cinq")]
    assert skipped == {"empty": 1, "ragged": 2, "not_utf8": 1}
    with pytest.raises(ParallelTextError) as error:
        read_table_rows(str(path), strict=True)
    assert one_line(error).startswith(f"{path}:3: expected 2 fields")

    tsv = write(tmp_path / "pairs.tsv", "id\ten\tfr\n1\tone\n2\ttwo\tdeux\n")
    rows, skipped = read_table_rows(tsv, columns=("en", "fr"))
    assert rows == [(3, "two", "deux")] and skipped["ragged"] == 1


def test_a_quote_left_open_names_the_line(tmp_path):
    path = write(tmp_path / "pairs.csv", 'en,fr\none,un\n"two,deux\nthree,trois\n')
    with pytest.raises(ParallelTextError) as error:
        read_table_rows(path)
    assert one_line(error).startswith(f"{path}:3: not readable as CSV")


def test_image_paths_come_from_the_input_column(tmp_path):
    (tmp_path / "dot.png").write_bytes(b"\x89PNG not decoded here")
    path = write(tmp_path / "captions.csv", "caption,image\na dot,dot.png\n")
    source = {"kind": "file", "path": path, "columns": ["image", "caption"]}
    splits = load_data({"task": "captioner"}, source)
    ((image, caption),) = [pair for split in splits.values() for pair in split]
    assert caption == "a dot" and bytes(image).startswith(b"\x89PNG")


def test_the_run_records_its_columns_and_refuses_others(tmp_path):
    path = write(tmp_path / "pairs.csv", "id,en,fr\n1,one,un\n2,two,deux\n")
    run = RunFolder(str(tmp_path / "run"))
    source = run.resolve_data_source(path, {}, ("en", "fr"))
    assert source["columns"] == ["en", "fr"]
    os.makedirs(run.path)
    run.record_data_source(source)
    recorded = json.loads((tmp_path / "run" / "data_source.json").read_text(encoding="utf-8"))
    assert recorded["columns"] == ["en", "fr"]
    # A resume, with or without --data, reads the recorded columns.
    assert run.resolve_data_source(None, {})["columns"] == ["en", "fr"]
    assert run.resolve_data_source(path, {})["columns"] == ["en", "fr"]
    splits = load_data({}, run.resolve_data_source(None, {}))
    assert sorted(pair for split in splits.values() for pair in split) == [("one", "un"),
                                                                          ("two", "deux")]
    for data_path in (None, path):  # other columns: refused like other data
        with pytest.raises(KseqError) as error:
            run.resolve_data_source(data_path, {}, ("id", "fr"))
        line = one_line(error)
        assert "was trained on --data" in line and "--columns en,fr" in line
        assert line.endswith("--columns id,fr")
    with pytest.raises(KseqError, match="pass --data FILE too"):
        RunFolder(str(tmp_path / "new")).resolve_data_source(None, {"data": {}}, ("en", "fr"))


@pytest.mark.parametrize("argv, expected", [
    (["--columns", "english,frnech"], "the header has no column 'frnech'; its columns are "
                                      "'id', 'english', 'french'"),
    (["--columns", "english"], "argument --columns: must be two names"),
])
def test_train_refuses_a_bad_column_name_and_writes_nothing(tmp_path, capsys, argv, expected):
    data = write(tmp_path / "pairs.csv", "id,english,french\n1,one,un\n")
    run = tmp_path / "run"
    assert main(["train", PRESET, "--output", str(run), "--data", data] + argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("kseq: error: ") and expected in line, line
    assert captured.out == "" and sorted(os.listdir(tmp_path)) == ["pairs.csv"]


def test_evaluate_refuses_columns_for_a_split(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path), "--data", "test", "--columns", "en,fr"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--columns picks the columns of a --data file" in line
