"""`kseq --version`: the versions of kseq, TensorFlow, Keras and Python, without
importing TensorFlow or Keras."""

import argparse


def version_line():
    """`kseq 0.1.0 (TensorFlow 2.21.0, Keras 3.15.1, Python 3.11.9)`, read without importing
    TensorFlow or Keras (their installed distributions' metadata)."""
    import platform
    from importlib import metadata

    from kseq.version import __version__

    def installed(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return (f"kseq {__version__} (TensorFlow {installed('tensorflow')}, Keras "
            f"{installed('keras')}, Python {platform.python_version()})")


class _Version(argparse.Action):
    """`--version`: prints `version_line()` and exits 0 (computed only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit()
