"""Text processing: the in-graph tokenizers and vocabularies, and their plain-Python twin.

The names below are imported on first use (PEP 562), so that
`kseq.text.plain_tokenizer` and `kseq.text.token_marks` load without TensorFlow:
`kseq translate` on a CTranslate2 export runs in a process that never imports it.
`kseq.text.WordTokenizer` and `from kseq.text import WordTokenizer` work as before.
"""

import importlib as _importlib
import importlib.util as _importlib_util

_HOMES = {
    "CharTokenizer": "char_tokenizer",
    "Tokenizer": "tokenizer",
    "WordTokenizer": "word_tokenizer",
    "WordPieceTokenizer": "wordpiece_tokenizer",
    "PlainTokenizer": "plain_tokenizer",
    "TOKENIZERS": "tokenizer_catalog",
    "tokenizer_from_config": "tokenizer_catalog",
    "RESERVED_TOKENS": "token_marks",
    "PAD_ID": "token_marks",
    "UNK_ID": "token_marks",
    "START_ID": "token_marks",
    "END_ID": "token_marks",
}
__all__ = sorted(_HOMES)


def __getattr__(name):
    """A public name (imported from its module on first use), or a submodule."""
    if name not in _HOMES:
        if "." in name or _importlib_util.find_spec(f"kseq.text.{name}") is None:
            raise AttributeError(f"module 'kseq.text' has no attribute {name!r}")
        return _importlib.import_module(f"kseq.text.{name}")  # as `import kseq.text.x` gives
    value = getattr(_importlib.import_module(f"kseq.text.{_HOMES[name]}"), name)
    globals()[name] = value  # the next lookup does not come here
    return value


def __dir__():
    """The public names, loaded or not."""
    return sorted(set(globals()) | set(_HOMES))
