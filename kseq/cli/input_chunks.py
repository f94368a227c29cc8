"""Input lines in chunks: what `kseq translate`, `caption`, `classify` and `tag` decode.

A command never holds all of its input. `line_chunks(stream)` yields lists of lines
(bytes, the line ending removed): the first chunk is `first` lines (one batch of the
model, so the first results come out within seconds), each next one twice as long up to
`largest`. A chunk also ends early when the stream has had nothing more to give for
`linger` seconds, so a line typed or piped slowly gets its answer without waiting for a
full chunk or for the end of the input. Lines stay bytes: invalid UTF-8 becomes U+FFFD in
the model's tokenizer instead of failing the chunk.

Example:
>>> import io
>>> from kseq.cli.input_chunks import line_chunks
>>> stream = io.BytesIO(b"one\\ntwo\\r\\nthree\\nfour\\nfive\\nsix\\nseven")
>>> list(line_chunks(stream, first=1, largest=4))
[[b'one'], [b'two', b'three'], [b'four', b'five', b'six', b'seven']]
"""

import io
import os
import select

# What a read from a file descriptor asks for: a pipe holds 64 KiB.
READ_SIZE = 1 << 16

# Yielded by `_descriptor_lines` when the descriptor stayed silent for `linger` seconds.
_IDLE = object()


def chunk_sizes(first, largest):
    """`first`, `2·first`, `4·first`, ... capped at `largest`, forever.

    Example:
    >>> import itertools
    >>> list(itertools.islice(chunk_sizes(64, 256), 5))
    [64, 128, 256, 256, 256]
    """
    size = first
    while True:
        yield size
        size = min(largest, size * 2)


def line_chunks(stream, first=64, largest=1024, linger=0.2):
    """Lists of at most `largest` lines of `stream` (binary or text), in order.

    Args:
        stream: a file object; one with a file descriptor (stdin, a pipe, a file) is read
            with `os.read`, so a chunk can end when the descriptor goes quiet; others
            (`io.StringIO`, `io.BytesIO`) are read line by line.
        first: the first chunk's length (e.g. the model's batch size).
        largest: the longest chunk; lines held at once never exceed it.
        linger: seconds of silence on the descriptor after which the lines read so far
            are yielded as a chunk of their own.
    """
    sizes = chunk_sizes(first, largest)
    descriptor = _descriptor(stream)
    lines = _stream_lines(stream) if descriptor is None else _descriptor_lines(descriptor,
                                                                               linger)
    chunk, size = [], next(sizes)
    for line in lines:
        if line is not _IDLE:
            chunk.append(line)
        if chunk and (line is _IDLE or len(chunk) == size):
            yield chunk
            chunk, size = [], next(sizes)
    if chunk:
        yield chunk


def _descriptor(stream):
    """The file descriptor under `stream`, or None (an in-memory stream)."""
    try:
        return stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None


def _stream_lines(stream):
    """Each line of a file object as bytes without its line ending; a `str` line (a text
    stream) is encoded with `surrogatepass`, so a lone surrogate reaches the tokenizer as
    the bytes a served model would get."""
    for line in stream:
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        yield line.rstrip(b"\r\n")


def _descriptor_lines(descriptor, linger):
    """Each line read from `descriptor`, and `_IDLE` once whenever lines were given and the
    descriptor then has no data ready within `linger` seconds. The last line needs no
    line ending."""
    parts, quiet = [], True  # `quiet`: nothing given since the last `_IDLE`
    while True:
        if not quiet and not _ready(descriptor, linger):
            quiet = True
            yield _IDLE
        data = os.read(descriptor, READ_SIZE)  # blocks until data or the end of input
        if not data:
            break
        if b"\n" not in data:
            parts.append(data)  # a long line: joined once, when its end comes
            continue
        lines = (b"".join(parts) + data).split(b"\n")
        parts = [lines.pop()]  # the start of a line whose end has not come yet
        quiet = False
        for line in lines:
            yield line.rstrip(b"\r")
    last = b"".join(parts)
    if last:
        yield last.rstrip(b"\r")


def _ready(descriptor, timeout):
    """Whether `descriptor` has data (or its end) to read within `timeout` seconds. Where
    `select` cannot watch it (a Windows pipe), True: the read blocks, as a plain read
    would."""
    try:
        return bool(select.select([descriptor], [], [], timeout)[0])
    except (OSError, ValueError):
        return True
