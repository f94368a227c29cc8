"""The in-graph tokenizers by kind, and one rebuilt from its `get_config()`."""

from kseq.text.char_tokenizer import CharTokenizer
from kseq.text.word_tokenizer import WordTokenizer
from kseq.text.wordpiece_tokenizer import WordPieceTokenizer

TOKENIZERS = {cls.kind: cls for cls in (WordTokenizer, CharTokenizer, WordPieceTokenizer)}


def tokenizer_from_config(config):
    """Rebuilds a tokenizer from `Tokenizer.get_config()`."""
    config = dict(config)
    kind = config.pop("kind")
    if kind not in TOKENIZERS:
        raise ValueError(f"Unknown tokenizer kind; expected one of {sorted(TOKENIZERS)}. "
                         f"Received: kind={kind!r}")
    return TOKENIZERS[kind](**config)
