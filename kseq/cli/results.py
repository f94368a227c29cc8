"""How a command prints: its results (to stdout or `--output FILE`), notes and warnings."""

import contextlib
import json
import os
import sys

from kseq.errors import KseqError


def _warn(message):
    print(f"kseq: warning: {message}", file=sys.stderr, flush=True)


def _note(args, message):
    """An informational line on stderr, left out with --quiet."""
    if not args.quiet:
        print(message, file=sys.stderr, flush=True)


def _check_output_file(path):
    """`--output FILE` of a command that prints results: a file in an existing folder."""
    if path is None:
        return
    if os.path.isdir(path):
        raise KseqError(f"--output must name a file, not a folder. Received: --output {path}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise KseqError(f"--output's folder does not exist. Received: --output {path}")


@contextlib.contextmanager
def _result_lines(args):
    """Yields `write(lines)`: each call's lines printed and flushed at once (a stream's
    results come out as they are made), or with `--output FILE` written to a temporary file
    beside FILE that replaces it when the command ends (a failed command leaves FILE as it
    was). A reader of stdout that goes away (`| head`) raises `BrokenPipeError`."""
    path = getattr(args, "output", None)
    if path is None:
        yield _print_lines
        return
    from kseq.atomic_files import atomic_path

    count = 0
    with atomic_path(path) as scratch, open(scratch, "w", encoding="utf-8") as handle:
        def write(lines):
            nonlocal count
            handle.writelines(f"{line}\n" for line in lines)
            count += len(lines)

        yield write
    _note(args, f"wrote {count} lines to {path}")


def _print_lines(lines):
    if lines:
        sys.stdout.write("".join(f"{line}\n" for line in lines))
        sys.stdout.flush()


def _json_line(record):
    return json.dumps(record, ensure_ascii=False)
