import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kseq.cli import main

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}


def kseq_command(*args):
    return [sys.executable, "-m", "kseq.cli", *args]


def keras_step_of(path):
    """The optimizer's step counter saved in a `.keras` file."""
    import keras

    return keras.saving.load_model(path).optimizer.iterations.numpy()


def test_presets_lists_names(capsys):
    assert main(["presets"]) == 0
    assert "numbers_fr_tiny" in capsys.readouterr().out


def test_clear_errors_without_tracebacks(tmp_path, capsys):
    assert main(["translate", str(tmp_path / "missing"), "one"]) == 2
    err = capsys.readouterr().err
    assert "kseq: error: No trained model here" in err and "Traceback" not in err
    assert main(["train", "no_such_preset", "--output", str(tmp_path / "x")]) == 2
    assert "numbers_fr_tiny" in capsys.readouterr().err


def _wait_for_backup(folder, process, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        metadata = folder / "backup" / "training_metadata.json"
        if metadata.exists():
            saved = json.loads(metadata.read_text())
            if saved.get("epoch", 0) >= 1 or saved.get("batch", 0) > 0:
                return saved
        if process.poll() is not None:
            raise AssertionError("training ended before it could be interrupted")
        time.sleep(0.5)
    raise AssertionError("no checkpoint appeared")


@pytest.mark.slow
def test_train_resumes_after_kill_then_translate_evaluate_and_continue(tmp_path):
    output = tmp_path / "run"
    command = kseq_command("train", "numbers_fr_tiny", "--output", str(output),
                           "--epochs", "4", "--save-every", "4")
    first = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    _wait_for_backup(output, first)
    first.send_signal(signal.SIGKILL)
    first.wait()
    second = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    resumed = [line for line in second.stdout.splitlines() if line.startswith("resuming at step")]
    assert resumed and int(resumed[0].split()[-1]) >= 4
    assert "val BLEU" in second.stdout
    assert (output / "model.keras").exists()

    translated = subprocess.run(kseq_command("translate", str(output), "--beam", "2"),
                                input="one\ntwenty-two\n", env=ENV, capture_output=True,
                                text=True, timeout=300)
    assert translated.returncode == 0, translated.stderr
    # One line per input; an undertrained tiny model may print empty lines, so count
    # line ends rather than non-empty text (CI once got "\n\n": two empty translations).
    assert translated.stdout.count("\n") == 2, translated.stdout
    evaluated = subprocess.run(kseq_command("evaluate", str(output), "--data", "test",
                                            "--beam", "1", "--limit", "10"),
                               env=ENV, capture_output=True, text=True, timeout=300)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "nrefs:1|case:mixed" in evaluated.stdout

    finished_step = int(keras_step_of(output / "model.keras"))
    more = subprocess.run(kseq_command("train", "numbers_fr_tiny", "--output", str(output),
                                       "--epochs", "1"),
                          env=ENV, capture_output=True, text=True, timeout=600)
    assert more.returncode == 0, more.stdout + more.stderr
    assert f"continuing from {output / 'model.keras'} (step {finished_step})" in more.stdout
    assert int(keras_step_of(output / "model.keras")) > finished_step
