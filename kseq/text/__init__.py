"""Text processing: the in-graph tokenizers and vocabularies, and their plain-Python twin.

The names below are imported on first use (PEP 562), so that
`kseq.text.plain_tokenizer` and `kseq.text.token_marks` load without TensorFlow:
`kseq translate` on a CTranslate2 export runs in a process that never imports it.
`kseq.text.WordTokenizer` and `from kseq.text import WordTokenizer` work as before.
"""

import importlib
import importlib.util

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
    if name not in _HOMES:
        if importlib.util.find_spec(f"kseq.text.{name}") is None:  # a submodule, as before
            raise AttributeError(f"module 'kseq.text' has no attribute {name!r}")
        return importlib.import_module(f"kseq.text.{name}")
    value = getattr(importlib.import_module(f"kseq.text.{_HOMES[name]}"), name)
    globals()[name] = value  # the next lookup does not come here
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))
