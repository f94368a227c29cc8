"""`$KSEQ_HOME`: the folder every data builder and cache writes under."""

import os


def kseq_home():
    """The cache folder: `$KSEQ_HOME`, default `~/.cache/kseq`."""
    return os.environ.get("KSEQ_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "kseq")
