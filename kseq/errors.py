"""The one exception type kseq raises for a problem the user can fix.

`kseq.cli.main` prints any `KseqError` as one line, `kseq: error: ...`, and
exits with code 2. Messages say what was expected and end with
`Received: ...` (DESIGN §6). It subclasses `ValueError`, so code that caught
`ValueError` before still catches it.

Example:
>>> from kseq.errors import KseqError, one_line
>>> isinstance(KseqError("bad"), ValueError)
True
>>> one_line(OSError("disk\\n  full"))
'disk full'
"""


class KseqError(ValueError):
    """A bad argument, a bad file or a failed write, explained in one line."""


def one_line(error, limit=None):
    """`error`'s message on one line (whitespace collapsed), cut to `limit` characters."""
    text = " ".join(str(error).split()) or type(error).__name__
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
