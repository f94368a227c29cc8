"""The `kseq` command: presets, train, translate, caption, classify, tag, generate, evaluate,
export.

Every error is one line, `kseq: error: ...`, with exit code 2: bad arguments
(named, with the value received), unreadable files, failed writes, and a
training loss that became NaN. `caption` and an image `classify` take each
file on its own: every readable file gets its output, each one that cannot be
read a `kseq: warning:` line naming it, and the exit code is then 1.
`main(argv)` returns the exit code, so it also runs in-process.

Start-up is quiet and fast. `kseq --help`, `kseq COMMAND --help`, `--version`
and `presets` import no TensorFlow (the package loads its rooms on first use in
this process, see `kseq/__init__.py`; this package imports TensorFlow only inside
the commands). Run as the `kseq` command (`main()` without `argv`), the
process's own stderr is filtered at the file-descriptor level before TensorFlow
loads: TensorFlow's and absl's lines (the absl pre-init warning, oneDNN and CUDA
notices, `WARNING:tensorflow:` lines), which no environment variable silences,
are dropped, every other line passes (`--verbose` keeps them all).

One concept per module: `entry_point` (`main`), `parser` (the arguments, no
TensorFlow), `argument_types`, `version_option`, `stderr_filter`, `results` (how
commands print), `task_loading` and `task_options` (the model a command runs and
the options it takes), `path_checks` (the files a command names, checked before TensorFlow
loads), `part_listing` (what `presets --parts` prints), `decode_stream`, `input_chunks` and `progress_line` (how
translate, caption, classify and tag read stdin or `--input FILE` as a stream: chunks in,
each chunk's results out at once, progress on stderr), and the commands: `presets_command`,
`train_command`, `generate_commands` (translate, caption, classify, tag),
`text_generation_command` (a language model's generate),
`evaluate_command`, `export_command`.
"""

from kseq.cli.argument_types import RECIPE_SECTIONS  # noqa: F401
from kseq.cli.entry_point import main  # noqa: F401
from kseq.cli.parser import build_parser  # noqa: F401
from kseq.cli.stderr_filter import (  # noqa: F401
    TENSORFLOW_LINE, is_tensorflow_line, tensorflow_lines_filtered)
from kseq.cli.train_command import _budget_note  # noqa: F401
from kseq.cli.version_option import version_line  # noqa: F401
