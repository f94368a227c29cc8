"""Decoding as a stream (issue 47 item 6): `kseq translate` (and `caption`, `classify`, `tag`)
read stdin or `--input FILE` in chunks and write each chunk's results as they come.

The reader (`kseq.cli.input_chunks`) on real pipes; the command in-process on the shipped
`numbers_fr_transformer` (loaded once for the module, `testing.load_presets_once`): order
across chunks, `--input FILE`, arguments as before, the progress line, `evaluate --limit`
reading only its rows; and once in a child process whose stdin stays open, to see the first
results come before the input ends.
"""

import contextlib
import fcntl
import functools
import io
import os
import queue
import subprocess
import sys
import threading

import pytest

from kseq.cli import main
from kseq.cli.input_chunks import line_chunks
from testing import load_presets_once

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESET = "numbers_fr_transformer"
LOADED = {}  # the preset, loaded by the first command of the module
NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def next_item(items, timeout=10.0):
    try:
        return items.get(timeout=timeout)
    except queue.Empty:
        pytest.fail(f"nothing came within {timeout} s")


def test_a_pipe_gives_its_lines_when_it_goes_quiet_not_at_its_end():
    read, write = os.pipe()
    chunks = queue.Queue()
    reader = threading.Thread(target=lambda: [chunks.put(chunk) for chunk in line_chunks(
        os.fdopen(read, "rb"), first=4, largest=8, linger=0.05)] and chunks.put(None))
    reader.start()
    try:
        os.write(write, b"one\ntwo\r\nthr")
        assert next_item(chunks) == [b"one", b"two"]  # the pipe is still open
        os.write(write, b"ee\n" + b"x" * 200_000 + b"\n")  # a line longer than a read
        assert next_item(chunks) == [b"three", b"x" * 200_000]
        os.write(write, b"".join(b"%d\n" % n for n in range(20)) + b"last")
    finally:
        os.close(write)
    rest = iter(lambda: next_item(chunks), None)
    # Full chunks double up to `largest`; the line without an ending comes last.
    assert [len(chunk) for chunk in rest] == [8, 8, 5]
    reader.join()


def test_text_and_byte_streams_keep_every_line_in_order():
    text = "".join(f"{n}\n" for n in range(10)) + "ten"
    chunks = list(line_chunks(io.StringIO(text), first=3, largest=4))
    assert [len(chunk) for chunk in chunks] == [3, 4, 4]
    assert b"".join(line + b"," for chunk in chunks for line in chunk) == (
        b"0,1,2,3,4,5,6,7,8,9,ten,")
    assert list(line_chunks(io.BytesIO(b""))) == []


@pytest.fixture
def preset(monkeypatch):
    load_presets_once(monkeypatch, LOADED)


@pytest.mark.slow  # the shipped preset loaded (a few seconds) and traced
def test_chunks_come_out_in_input_order_each_before_the_next_is_read(preset, capsys,
                                                                      monkeypatch):
    import kseq.training

    lines = [NUMBERS[n % 10] + ("" if n < 10 else f" hundred and {NUMBERS[n % 7]}")
             for n in range(200)]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    model = kseq.training.load_trained(PRESET)
    calls, written, translate = [], [], model.translate

    def recorded(texts, **options):  # a chunk's size, and the result lines written before it
        written.extend(capsys.readouterr().out.splitlines())
        calls.append((len(texts), len(written)))
        return translate(texts, **options)

    monkeypatch.setattr(model, "translate", recorded)
    assert main(["translate", PRESET, "--beam", "1"]) == 0
    monkeypatch.setattr(model, "translate", translate)
    written.extend(capsys.readouterr().out.splitlines())
    assert calls == [(64, 0), (128, 64), (8, 192)]  # one batch, then doubling; each chunk's
    # results were out before the next chunk was decoded, and all of them in input order:
    assert written == model.translate(lines, beam_size=1)  # (all at once, sorted by length)


@pytest.mark.slow
def test_input_file_arguments_and_output_file(preset, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # never read here
    given = tmp_path / "in.txt"
    given.write_bytes(b"forty-two\r\nnine hundred\n\xff seven\n")
    assert main(["translate", PRESET, "--beam", "1", "--input", str(given)]) == 0
    from_file = capsys.readouterr().out.splitlines()
    assert from_file[:2] == ["quarante-deux", "neuf cents"] and len(from_file) == 3
    assert main(["translate", PRESET, "forty-two", "nine hundred", "--beam", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == from_file[:2]  # arguments, as before
    output = tmp_path / "out.txt"
    assert main(["translate", PRESET, "--beam", "1", "--input", str(given), "--output",
                 str(output), "--json"]) == 0
    assert capsys.readouterr().err == f"wrote 3 lines to {output}\n"
    assert output.read_text().count('"input"') == 3
    assert main(["translate", PRESET, "one", "--input", str(given)]) == 2
    assert "not both. Received: --input" in capsys.readouterr().err
    assert main(["tag", PRESET, "--input", str(tmp_path / "missing.txt")]) == 2
    assert capsys.readouterr().err.startswith("kseq: error: Cannot read the --input file")


@pytest.mark.slow
def test_progress_is_plain_lines_on_stderr_and_quiet_with_quiet(preset, capsys, monkeypatch):
    import kseq.cli.decode_stream as decode_stream
    from kseq.cli.progress_line import ProgressLine

    monkeypatch.setattr(decode_stream, "ProgressLine", functools.partial(ProgressLine,
                                                                         interval=0.0))
    for quiet in ([], ["--quiet"]):
        monkeypatch.setattr("sys.stdin", io.StringIO("one\n" * 70))
        assert main(["translate", PRESET, "--beam", "1", *quiet]) == 0
        captured = capsys.readouterr()
        assert captured.out == "un\n" * 70
        if quiet:
            assert captured.err == ""
            continue
        first, second, total = captured.err.splitlines()
        assert first.startswith("kseq: translated 64 lines (") and first.endswith(" lines/s)")
        assert second.startswith("kseq: translated 70 lines (")
        assert total.startswith("kseq: translated 70 lines in ")
        assert "\r" not in captured.err and "\x1b" not in captured.err


@pytest.mark.slow
def test_evaluate_limit_reads_only_the_rows_it_scores(preset, tmp_path, capsys, caplog):
    data = tmp_path / "pairs.tsv"
    data.write_bytes(b"forty-two\tquarante-deux\nnine\tneuf\nragged line\n\xff\tbad\n")
    assert main(["evaluate", PRESET, "--data", str(data), "--beam", "1", "--limit", "2"]) == 0
    assert "(2 pairs)" in capsys.readouterr().out
    assert "skipped" not in caplog.text  # the rows after the limit were never read
    assert main(["evaluate", PRESET, "--data", str(data), "--beam", "1"]) == 0
    assert "(2 pairs)" in capsys.readouterr().out
    assert "skipped {'ragged': 1, 'not_utf8': 1}" in caplog.text


@pytest.mark.slow  # a fresh process that loads TensorFlow: 8-15 s
def test_the_first_results_come_while_stdin_is_still_open():
    """A child process (a fresh `kseq`): lines written, their translations read back before
    stdin closes; then a reader that goes away (`| head`) stops it without a traceback."""
    child = subprocess.Popen([sys.executable, "-m", "kseq.cli", "translate", PRESET, "--beam",
                              "1"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, bufsize=1)
    lines, stop = queue.Queue(), threading.Event()

    def read():
        for line in child.stdout:
            lines.put(line)
            if stop.is_set():
                break
        child.stdout.close()  # `| head`: the reader goes

    fcntl.fcntl(child.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)  # Linux: 64 KiB -> 4 KiB
    reader = threading.Thread(target=read)
    reader.start()
    try:
        child.stdin.write("forty-two\nnine hundred\n")
        child.stdin.flush()
        # The model loads (a few seconds) before the first line can come.
        assert [next_item(lines, 120), next_item(lines)] == ["quarante-deux\n", "neuf cents\n"]
        child.stdin.write("seven\n")
        child.stdin.flush()
        assert next_item(lines) == "sept\n"
        stop.set()
        # The child's stdout pipe holds 4 KiB, the results of these lines 14 KB: the child
        # writes after the reader has gone.
        with contextlib.suppress(BrokenPipeError):  # the child may stop reading first
            child.stdin.write("seven hundred and seventy-seven\n" * 500)
            child.stdin.close()
    finally:
        code = child.wait(timeout=120)
        reader.join()
    error = child.stderr.read()
    assert code == 1 and "Traceback" not in error and "rror" not in error, error
