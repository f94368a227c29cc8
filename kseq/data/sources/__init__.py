"""Where offline data comes from: the `$KSEQ_HOME` cache, PyPI wheels and Debian packages."""
