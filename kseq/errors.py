"""The one exception type kseq raises for a problem the user can fix.

`kseq.cli.main` prints any `KseqError` as one line, `kseq: error: ...`, and
exits with code 2. Messages say what was expected and end with
`Received: ...` (DESIGN §6). It subclasses `ValueError`, so code that caught
`ValueError` before still catches it.

Example:
>>> from kseq.errors import KseqError
>>> isinstance(KseqError("bad"), ValueError)
True
"""


class KseqError(ValueError):
    """A bad argument, a bad file or a failed write, explained in one line."""
