"""Ctrl-C and SIGTERM during `kseq train` (issue 49, item 5), and what a log file holds.

Real signals, as a person or a cluster sends them: SIGINT to a `kseq train` child
process after the second epoch began; SIGTERM to the same command resumed (run in
this process: a second TensorFlow start would cost ~6 s); then the same command
with `--quiet` finishes the run. Each interrupted run prints one line, exits 130 /
143 and leaves a checkpoint at the step it names; the next one resumes there.
Their stdout is not a terminal, so it also shows the progress a log file gets:
one plain line per epoch (item 6).
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from kseq.cli import main

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}
# Six batches an epoch, one bucket; validation BLEU on 8 sentences (scores in the lines).
ARGUMENTS = ["train", "numbers_fr_tiny", "--epochs", "5", "--save-every", "4",
             "--set", "data.train_size=192", "--set", "data.valid_size=8",
             "--set", "data.test_size=8", "--set", "training.boundaries=[32]"]
KSEQ = "import sys; from kseq.cli import main; sys.exit(main())"  # as the `kseq` script
LINE = re.compile(r"^interrupted at step (\d+) \(epoch (\d+)\); the same command resumes$")


def checkpoint_steps(folder):
    backup = folder / "backup"
    names = os.listdir(backup) if backup.is_dir() else []
    return sorted(int(name[5:14]) for name in names if re.fullmatch(r"step-\d{9}\.json", name))


def wait_for_checkpoint(folder, after_step, running):
    deadline = time.monotonic() + 300
    while not any(step > after_step for step in checkpoint_steps(folder)):
        if not running() or time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def interrupted_child(folder, signum, after_step):
    """Runs `kseq train` into `folder` in a child process, sends `signum` once a checkpoint
    past `after_step` exists, and returns `(exit code, stdout, stderr)`."""
    child = subprocess.Popen([sys.executable, "-c", KSEQ, *ARGUMENTS, "--output", str(folder)],
                             env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if wait_for_checkpoint(folder, after_step, lambda: child.poll() is None):
        child.send_signal(signum)
    out, err = child.communicate(timeout=120)
    return child.returncode, out, err


def interrupted_here(folder, signum, after_step, capsys):
    """The same in this process: a thread sends `signum` to it (Python runs the handler in
    the main thread, where `main` trains)."""
    done = threading.Event()
    sender = threading.Thread(target=lambda: wait_for_checkpoint(
        folder, after_step, lambda: not done.is_set()) and os.kill(os.getpid(), signum))
    sender.start()
    try:
        code = main([*ARGUMENTS, "--output", str(folder)])
    finally:
        done.set()
        sender.join()
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def the_interruption(code, err, expected_code, folder):
    """The one line's step, checked against the exit code and the checkpoint it names."""
    assert code == expected_code, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.startswith("interrupted")]
    assert len(lines) == 1 and err.rstrip().endswith(lines[0]), err[-3000:]
    step, epoch = map(int, LINE.match(lines[0]).groups())
    assert epoch == step // 6 + 1
    assert step in checkpoint_steps(folder)
    metadata = json.loads((folder / "backup" / f"step-{step:09d}.json").read_text())
    assert metadata["step"] == step and not metadata["finished"]
    return step


def assert_plain_epoch_lines(out):
    """What a log file gets: no escape sequence, no redraw, one line per epoch."""
    assert "\x1b" not in out and "\r" not in out and "\b" not in out
    epochs = [line for line in out.splitlines() if line.startswith("epoch ")]
    for line in epochs:
        assert re.match(r"^epoch \d/5: loss \d+\.\d{4}, accuracy \d\.\d{4}; validation BLEU "
                        r"\d+\.\d\d, chrF \d+\.\d\d, exact match \d\.\d{4} \(\d+\.\d s\); "
                        r"\d+:\d\d(, about \d+:\d\d left)?$", line), line
        assert "val_" not in line and "seconds" not in line
    return epochs


@pytest.mark.slow  # a training child, then two runs in this process: ~25 s
def test_sigint_then_sigterm_checkpoint_one_line_exit_code_and_resume(tmp_path, capsys):
    folder = tmp_path / "run"
    code, out, err = interrupted_child(folder, signal.SIGINT, after_step=7)  # epoch 2 began
    first = the_interruption(code, err, 130, folder)
    assert "\nmodel: 24,544 parameters, 6 steps an epoch, float32, strategy auto (1 replica)\n" \
        in out, out
    assert len(assert_plain_epoch_lines(out)) == first // 6  # the epochs it completed

    code, out, err = interrupted_here(folder, signal.SIGTERM, first, capsys)
    assert re.search(rf"^resuming at step {first} \(epoch {first // 6 + 1}, batch {first % 6};",
                     out, re.MULTILINE), out
    second = the_interruption(code, err, 143, folder)
    assert second > first
    assert_plain_epoch_lines(out)
    rows = (folder / "history.csv").read_text().splitlines()[1:]
    assert [int(row.split(",")[0]) for row in rows] == list(range(second // 6))

    # --quiet: the saved path and the last epoch's validation scores, nothing else.
    assert main([*ARGUMENTS, "--output", str(folder), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(rf"saved {re.escape(str(folder / 'model.keras'))} \(24,544 parameters\); "
                        r"epoch 5: validation BLEU \d+\.\d\d, chrF \d+\.\d\d, exact match "
                        r"\d\.\d{4} \(\d+\.\d s\)\n", out), out
    assert not (folder / "backup").exists()


def test_a_second_signal_exits_at_once(monkeypatch, capfd):
    from kseq.training import interruption as module

    def exit_now(code):
        raise SystemExit(code)

    monkeypatch.setattr(module.os, "_exit", exit_now)  # os._exit would end pytest itself
    interruption = module.Interruption(checkpointing=None, guard=None, steps_per_epoch=1,
                                       target_epochs=1)
    interruption._record(signal.SIGINT, None)  # recorded: training stops at a batch end
    assert interruption.signum == signal.SIGINT
    with pytest.raises(SystemExit) as exited:
        interruption._record(signal.SIGINT, None)  # the second: out at once
    assert exited.value.code == 130
    assert capfd.readouterr().err == "interrupted again: exiting without a new checkpoint\n"
