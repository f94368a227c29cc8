"""`main(argv)`: parse, run one command, and turn every error into one line.

Every error is one line, `kseq: error: ...`, with exit code 2; Ctrl-C is one line too,
with exit code 130 (143 when SIGTERM stopped `kseq train`). Run as the `kseq` command
(`main()` without `argv`), TensorFlow's and absl's lines are filtered out of the process's
stderr (`kseq.cli.stderr_filter`) unless `--verbose`.
"""

import contextlib
import logging
import os
import sys

from kseq.cli.decode_stream import _stdout_to_devnull
from kseq.cli.parser import _UsageError, build_parser
from kseq.cli.stderr_filter import tensorflow_lines_filtered
from kseq.errors import KseqError, one_line


def _parse(argv):
    """The parsed arguments, or the exit code of `--help` / `--version` (argparse exits)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 0
    if args.verbose and args.quiet:
        raise _UsageError("--verbose and --quiet exclude each other. "
                          "Received: --verbose --quiet")
    return args


def main(argv=None):
    """Runs one command; returns the exit code: 0, 1 when `caption` or an image `classify`
    skipped a file that cannot be read (each named in a warning line), 2 after a one-line
    error, or 130 / 143 after Ctrl-C / SIGTERM (`kseq train` first saves a checkpoint).
    Run as the `kseq` command (no `argv`), TensorFlow's and absl's lines are filtered
    out of the process's stderr unless `--verbose`."""
    logging.basicConfig(level=logging.WARNING, format="kseq: %(message)s")
    logger = logging.getLogger("kseq")
    level = logger.level  # restored on return: `--quiet` must not outlive its command
    try:
        return _run(argv, logger)
    finally:
        logger.setLevel(level)


def _run(argv, logger):
    try:
        args = _parse(argv)
        if isinstance(args, int):
            return args
        logger.setLevel(
            logging.ERROR if args.quiet else logging.INFO if args.verbose else logging.NOTSET)
        if not args.verbose:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        filtered = argv is None and not args.verbose  # before any TensorFlow import
        with tensorflow_lines_filtered() if filtered else contextlib.nullcontext():
            code = args.run(args)
            sys.stdout.flush()  # here, where a closed pipe is caught, not at the exit
        return code or 0
    except BrokenPipeError:  # the reader went away (`kseq presets | head -1`): stop quietly
        _stdout_to_devnull()
        return 1
    except _UsageError as error:
        print(f"kseq: error: {one_line(error)}", file=sys.stderr)
        return 2
    except (KseqError, ValueError, OSError, ImportError) as error:
        # OSError covers read-only folders, a file where a folder belongs, a full disk.
        print(f"kseq: error: {one_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:  # Ctrl-C, or `kseq train`'s SIGINT / SIGTERM
        # `TrainingInterrupted` says where training stopped and carries its signal's code.
        print(" ".join(str(error).split()) or "kseq: interrupted", file=sys.stderr)
        return getattr(error, "exit_code", 130)
