"""The `kseq` command starts quietly and fast (issue 31).

`--help`, `COMMAND --help`, `--version` and `presets` (its table, a card, `--parts`)
import no TensorFlow: each
runs in a fresh `python -X importtime -m kseq.cli ...` (the package treats
`-m kseq.cli` as its console script) and the modules it imported are read back.
TensorFlow's and absl's lines never reach the command's stderr unless
`--verbose`: the filter is checked on synthetic lines in-process, and on real
TensorFlow runs in two fresh processes (`kseq translate` with a shipped preset,
and the same with `--verbose`, which shows the lines the other drops).
"""

import os
import re
import subprocess
import sys

import pytest

from kseq import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The environment a user's shell gives: no TF_CPP_MIN_LOG_LEVEL (the command sets its own).
ENV = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
# Lines TensorFlow 2.21 printed on this machine before the filter (issue 31's report).
REAL_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1796279276.708194   22963 port.cc:153] oneDNN custom operations are on. You "
    "may see slightly different numerical results due to floating-point round-off errors.",
    "I0000 00:00:1796279276.708885   22963 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "E0000 00:00:1796279302.841570   23113 cuda_platform.cc:52] failed call to cuInit: "
    "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "I0000 00:00:1796279278.977558   23000 cpu_feature_guard.cc:227] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 FMA, in other "
    "operations, rebuild TensorFlow with the appropriate compiler flags.",
    "W0000 00:00:1796279863.684018   28940 util.cc:131] oneDNN supports DT_INT64 only on AVX-512",
    "WARNING:tensorflow:5 out of the last 5 calls to <function> triggered tf.function retracing.",
    "WARNING:absl:Compiled the loaded model, but the compiled metrics have yet to be built.",
]
# Lines that must pass: kseq's own, Python warnings, a fatal TensorFlow error, plain text.
KEPT_LINES = [
    "kseq: warning: skipped junk.png: 1 image(s) could not be decoded. Received: junk.png",
    "/x/keras/trainer.py:12: UserWarning: `shuffle=True` was passed, but will be ignored",
    "F0000 00:00:1796279863.684018   28940 check.cc:1] Check failed: a fatal error is kept",
    "Information: the word WARNING:tensorflow: in the middle of a line is kept",
]


def run_command(*argv, importtime=False):
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run([sys.executable, *flags, "-m", "kseq.cli", *argv], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


def imported_modules(stderr):
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines()
            if line.startswith("import time:")}


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["caption", "--help"],
                                  ["--version"], ["presets"], ["presets", "--parts"],
                                  ["presets", "sms_spam_classifier"]])
def test_help_version_and_presets_import_no_tensorflow(argv):
    done = run_command(*argv, importtime=True)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = imported_modules(done.stderr)
    assert "kseq.arguments" in modules  # the child did report its imports
    assert not {"tensorflow", "keras", "numpy"} & modules
    other = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert other == []  # nothing else on stderr: no TensorFlow line, no warning
    assert done.stdout.strip()


def test_version_names_kseq_tensorflow_keras_and_python(capsys):
    from importlib import metadata

    import kseq

    assert cli.main(["--version"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == (f"kseq {kseq.__version__} (TensorFlow {metadata.version('tensorflow')}, "
                    f"Keras {metadata.version('keras')}, Python {sys.version.split()[0]})")


def test_the_filter_drops_tensorflow_lines_and_keeps_every_other(capfd):
    assert all(cli.is_tensorflow_line(line) for line in REAL_LINES)
    assert not any(cli.is_tensorflow_line(line) for line in KEPT_LINES)
    mixed = [line for pair in zip(REAL_LINES, KEPT_LINES + [""] * 9) for line in pair if line]
    with cli.tensorflow_lines_filtered():
        for line in mixed:
            os.write(2, f"{line}\n".encode())  # as TensorFlow's C++ writes: below Python
        os.write(2, b"a last line without its newline")
    assert capfd.readouterr().err.splitlines() == KEPT_LINES + [
        "a last line without its newline"]
    with cli.tensorflow_lines_filtered():  # nothing written: nothing shown, no wait
        pass
    assert capfd.readouterr().err == ""


# A lost worker as the coordination service logs it on the chief (Keras 3.15 / TF 2.21, the
# multi-worker test's SIGKILL): one absl entry, then its body on lines of their own.
LOST_WORKER_ENTRY = [
    "E0000 00:00:1796314447.052214   12345 coordination_service_agent.cc:332] Polled an error "
    "from coordination service (this can be an error from this or another task).",
    "/job:worker/replica:0/task:1",
    "The tasks have crashed. Check the task logs for an earlier error, or scheduler events "
    "(e.g. preemption, eviction) to debug further. [type.googleapis.com/tensorflow.Coordination"
    "ServiceError='']",
    "/job:worker/replica:0/task:1",
    "The error could be from a previous operation. Restart your program to reset. "
    "[type.googleapis.com/tensorflow.DerivedStatus='']",
]


def test_the_body_lines_of_a_dropped_entry_go_with_it(capfd):
    kept = ["kseq: error: A worker of the cluster (worker 1 at 127.0.0.1:2) was lost ...",
            "/job:worker/replica:0/task:1",  # not after a dropped line: kept
            "The tasks have crashed. (a program's own line, after a kept line)"]
    with cli.tensorflow_lines_filtered():
        for line in LOST_WORKER_ENTRY + kept:
            os.write(2, f"{line}\n".encode())
    assert capfd.readouterr().err.splitlines() == kept


@pytest.mark.slow  # two fresh processes that load TensorFlow: ~15 s
def test_the_command_drops_tensorflow_lines_unless_verbose():
    """The quiet child also shows that the command, importing the package's rooms only on
    use, loads a model (its classes registered) and runs TensorFlow ops (which log again)."""
    argvs = {"quiet": ["translate", "numbers_fr_transformer", "forty-two", "--beam", "1"],
             "verbose": ["translate", "numbers_fr_transformer", "forty-two", "--verbose"]}
    children = {name: subprocess.Popen([sys.executable, "-m", "kseq.cli", *argv], cwd=ROOT,
                                       env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
                for name, argv in argvs.items()}
    done = {name: child.communicate(timeout=300) for name, child in children.items()}
    assert all(child.returncode == 0 for child in children.values()), done
    assert done["quiet"][0] == "quarante-deux\n"
    assert done["verbose"][0] == "quarante-deux\n"
    quiet_err, verbose_err = done["quiet"][1], done["verbose"][1]
    assert [line for line in verbose_err.splitlines() if cli.is_tensorflow_line(line)]
    assert not re.search(r"port\.cc|cudart_stub|absl::InitializeLog|cuda_platform", quiet_err)
    assert quiet_err == ""
