"""kseq: a Keras 3 / TensorFlow model zoo for sequence-to-sequence learning.

`import kseq` imports every room (`data`, `decoding`, `layers`, `metrics`,
`models`, `text`, `zoo`, `training`), which registers kseq's Keras classes, so
`keras.saving.load_model` reads a kseq model after it. The one exception is
the `kseq` command itself (its console script, or `python -m kseq.cli`, and the
demo's `python -m kseq.demo`): there
the rooms are imported on first use, so `kseq --help`, `kseq --version` and
`kseq presets` answer without loading TensorFlow, and every command that
loads a model imports them all first (`import_rooms`).
"""

import importlib
import os
import sys

from kseq.version import __version__  # noqa: F401

# `training` last: it builds on the others (and adds 0.07 s to their 10 s).
ROOMS = ("data", "decoding", "layers", "metrics", "models", "text", "zoo", "training")


def import_rooms():
    """Imports every room (TensorFlow, Keras and the registration of kseq's classes)."""
    for room in ROOMS:
        importlib.import_module(f"kseq.{room}")


def _is_the_command_line():
    """Whether this process is the `kseq` command: the console script (`.../bin/kseq`,
    `kseq.exe`) or `python -m kseq.cli` (its `-m kseq.cli` in `sys.orig_argv`), or the
    demo (`python -m kseq.demo`: its launcher prints its child's output, TensorFlow's
    start-up lines removed, and must not print its own)."""
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    if script in ("kseq", "kseq.exe", "kseq-script.py"):
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(argv[i : i + 2] in (["-m", "kseq.cli"], ["-m", "kseq.demo"])
               for i in range(len(argv) - 1))


def __getattr__(name):
    """`kseq.zoo` and the other rooms, imported on first use where not imported yet."""
    if name in ROOMS:
        return importlib.import_module(f"kseq.{name}")
    raise AttributeError(f"module 'kseq' has no attribute {name!r}")


if not _is_the_command_line():
    import_rooms()
