"""How a command prints: its results (to stdout or `--output FILE`), notes and warnings."""

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


def _emit(args, lines):
    """The results: printed, or written to `--output FILE` (atomically: a failed command
    leaves the file as it was)."""
    if getattr(args, "output", None) is None:
        for line in lines:
            print(line)
        return
    from kseq.atomic_files import atomic_write_text

    atomic_write_text(args.output, "".join(f"{line}\n" for line in lines))
    _note(args, f"wrote {len(lines)} lines to {args.output}")


def _json_line(record):
    return json.dumps(record, ensure_ascii=False)
