"""A command's inputs decoded as a stream: each chunk's results written as soon as they exist.

`kseq translate`, `caption`, `classify` and `tag` take their inputs as arguments (one
chunk, as given) or, without arguments, as the lines of `--input FILE` or of stdin, read in
chunks (`kseq.cli.input_chunks`): the model decodes one chunk at a time, in its usual
batches, and the chunk's result lines are written (and flushed) before the next chunk is
read. Memory holds one chunk's inputs and outputs, never the whole input, and results come
out in input order. When the results do not go to a terminal, `ProgressLine` reports the
lines done on stderr (not with `--quiet`, and not for arguments: there are few of them).

Example (a text stream, as a test gives stdin; upper-casing stands for a model):
>>> import argparse, io
>>> from kseq.cli.decode_stream import decode_stream, input_chunks
>>> args = argparse.Namespace(quiet=True, output=None)
>>> chunks = input_chunks(None, io.StringIO("one\\ntwo\\nthree\\n"), first=2, largest=2)
>>> decode_stream(args, "shouted", chunks, lambda chunk: [line.upper().decode()
...                                                      for line in chunk], streamed=True)
ONE
TWO
THREE
0
"""

import contextlib
import os
import sys

from kseq.cli.input_chunks import line_chunks
from kseq.cli.progress_line import ProgressLine
from kseq.cli.results import _result_lines
from kseq.errors import KseqError


@contextlib.contextmanager
def opened_input(args, given):
    """The stream a command reads when `given` (its positional inputs) is empty: `--input
    FILE` (opened here, before the model loads, and closed after) or stdin (`--input -`
    too); None when `given` has inputs. Both at once is refused."""
    path = getattr(args, "input", None)
    if given and path is not None:
        raise KseqError(f"Give inputs as arguments or with --input, not both. Received: "
                        f"--input {path} and {len(given)} argument(s)")
    if given:
        yield None
    elif path is None or path == "-":
        yield getattr(sys.stdin, "buffer", sys.stdin)  # bytes, where stdin has them
    else:
        try:
            handle = open(path, "rb")
        except OSError as error:
            raise KseqError(f"Cannot read the --input file ({error.strerror}). "
                            f"Received: --input {path}") from None
        with handle:
            yield handle


def input_chunks(given, stream, first, largest):
    """The inputs as chunks of bytes lines: `given` (arguments) as one chunk, else the
    lines of `stream` in chunks of `first` lines, doubling up to `largest`."""
    if stream is None:
        return [[os.fsencode(value) for value in given]]
    return line_chunks(stream, first=first, largest=largest)


def decode_stream(args, verb, chunks, decode, streamed):
    """Writes `decode(chunk)` (one result line per input) for each chunk as it is made.

    Args:
        args: the command's arguments (`--output`, `--quiet`).
        verb: what the command does to a line, for the progress line (`"translated"`).
        chunks: lists of inputs (`input_chunks`).
        decode: `chunk -> result lines`, in the chunk's order.
        streamed: whether the inputs come from a stream (progress is reported).

    Returns 0, or 1 when the reader of stdout went away (`| head`): decoding stops there,
    quietly, as a pipeline's producer does.
    """
    progress = ProgressLine(verb) if streamed and _shows_progress(args) else None
    try:
        with _result_lines(args) as write:
            for chunk in chunks:
                write(decode(chunk))
                if progress is not None:
                    progress.add(len(chunk))
    except BrokenPipeError:
        _stdout_to_devnull()
        return 1
    if progress is not None:
        progress.finish()
    return 0


def _shows_progress(args):
    """Progress is for results going where the terminal does not show them: a pipe, a file,
    `--output FILE`."""
    if args.quiet:
        return False
    if getattr(args, "output", None) is not None:
        return True
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def _stdout_to_devnull():
    """Points the process's stdout at /dev/null, so Python's final flush of what is still
    buffered does not fail a second time (Python's documented recipe for SIGPIPE)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
