"""`PlainTokenizer`: kseq's tokenizers in plain Python, for processes without TensorFlow.

The in-graph tokenizers (`WordTokenizer`, `CharTokenizer`, `WordPieceTokenizer`)
run inside models and exports. A CTranslate2 export needs the same tokens
without a graph: importing TensorFlow and tensorflow_text alone takes a process
to about 690 MB, more than CTranslate2 needs to translate
(`benchmarks/experiments/decode_rss_stages.py`). This twin reads the same
`get_config()` and gives the same tokens and the same detokenised text, step by
step: invalid UTF-8 becomes U+FFFD, control characters spaces, then the
Unicode normal form, lower-casing, one space for each run of ASCII spaces;
words and single punctuation marks with the joiner `￭`; WordPiece's longest
match first, a word it cannot cut (or longer than 100 bytes) being `<unk>`.

Where the two can differ: each side reads its own Unicode tables (Python's
`unicodedata`, TensorFlow's RE2 and ICU). On TensorFlow 2.21 and Python 3.11
the whole code space agrees except characters Python's database (Unicode 14)
does not assign yet, which RE2 reads as letters or numbers, and 40 capital
letters of Unicode 14 that TensorFlow's `lower` leaves as they are
(`tests/text/test_plain_tokenizer.py` sweeps the code points).

Example:
>>> tok = PlainTokenizer({"kind": "word", "vocabulary": ["<pad>", "<unk>", "<s>", "</s>",
...                       "Bonjour", "!", "l", "\\uffed'", "\\uffedhomme"]})
>>> tok.split(["Bonjour ! l'homme"])
[['Bonjour', '!', 'l', "￭'", '￭homme']]
>>> tok.detokenize(tok.tokenize(["Bonjour ! l'homme, oui"]))
["Bonjour ! l'homme <unk> <unk>"]
"""

import collections
import re
import unicodedata

from kseq.text.control_characters import replace_control_characters
from kseq.text.token_marks import END_ID, JOINER, PAD_ID, RESERVED_TOKENS, START_ID, SUFFIX, UNK_ID

KINDS = ("word", "char", "wordpiece")
NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")  # ICU takes them in any case; Python upper only
ASCII_SPACES = " \t\n\f\r"  # RE2's `\s`
_SPACE_RUNS = re.compile(f"[{ASCII_SPACES}]+")
# FastWordpieceTokenizer's default `max_bytes_per_token`: a longer word is `<unk>`.
MAX_BYTES_PER_WORD = 100
# Words whose WordPiece units are kept; past it the memo starts again (a long-running
# process must not grow with every distinct word it has seen).
WORD_MEMO_SIZE = 65536


class PlainTokenizer:
    """A tokenizer's `get_config()` (`kind`, `vocabulary`, `lowercase`, `normalization`) run
    in plain Python: the same tokens and text as the in-graph tokenizer of that config.

    Args:
        config: a dict as `Tokenizer.get_config()` writes it.
    """

    def __init__(self, config):
        kind = config.get("kind")
        if kind not in KINDS:
            raise ValueError(f"Unknown tokenizer kind; expected one of {sorted(KINDS)}. "
                             f"Received: kind={kind!r}")
        self.kind = kind
        self.vocabulary = list(config["vocabulary"])
        if tuple(self.vocabulary[:4]) != RESERVED_TOKENS:
            raise ValueError(f"A vocabulary must start with the reserved tokens "
                             f"{list(RESERVED_TOKENS)}. Received: vocabulary[:4]="
                             f"{self.vocabulary[:4]}")
        repeated = sorted(t for t, n in collections.Counter(self.vocabulary).items() if n > 1)
        if repeated:
            raise ValueError(f"A vocabulary must not repeat tokens. Received: repeated "
                             f"{repeated[:10]}")
        self.lowercase = bool(config.get("lowercase", False))
        self.normalization = normal_form(config.get("normalization", "NFC"))
        self.ids = {token: index for index, token in enumerate(self.vocabulary)}
        self._word_pieces = {}  # word -> its WordPiece units (words repeat a lot)

    def __repr__(self):
        return f"PlainTokenizer(kind={self.kind!r}, vocabulary_size={len(self.vocabulary)})"

    # === Text in ===

    def normalize(self, text):
        """One text (str, or bytes with invalid UTF-8) -> the text the graph's `normalize`
        makes of it (a str's lone surrogates count as their invalid UTF-8 bytes, as
        `kseq.arguments.check_texts` passes them to the graph)."""
        if isinstance(text, str):  # a lone surrogate: its bytes are invalid UTF-8, as in TF
            text = text.encode("utf-8", "surrogatepass")
        text = text.decode("utf-8", "replace")
        text = replace_control_characters(text)
        if self.normalization:
            text = unicodedata.normalize(self.normalization, text)
        if self.lowercase:
            text = text.lower()
        return _SPACE_RUNS.sub(" ", text).strip(ASCII_SPACES + "\v")

    def split(self, texts):
        """`[B]` texts -> `[B][T]` token strings (before the vocabulary: a WordPiece
        tokenizer's units, `<unk>` for a word it cannot cut)."""
        return [self._split_one(self.normalize(text)) for text in texts]

    def tokenize(self, texts):
        """`[B]` texts -> `[B][T]` ids (no start or end token; `<unk>` for unknown pieces)."""
        return [[self.ids.get(piece, UNK_ID) for piece in row] for row in self.split(texts)]

    def _split_one(self, text):
        if self.kind == "char":
            return list(text)
        words = _words_with_joiners(text)
        if self.kind == "word":
            return words
        return [unit for word in words for unit in self._wordpiece(word)]

    def _wordpiece(self, word):
        """Longest vocabulary unit first, continuations prefixed `##`; `<unk>` for the whole
        word when some part of it has no unit."""
        if len(word.encode("utf-8")) > MAX_BYTES_PER_WORD:
            return [RESERVED_TOKENS[UNK_ID]]  # not memoised: no long keys held
        units = self._word_pieces.get(word)
        if units is None:  # a local result: another thread may clear the memo meanwhile
            if len(self._word_pieces) >= WORD_MEMO_SIZE:
                self._word_pieces.clear()
            units = self._word_pieces[word] = _longest_units(word, self.ids)
        return units

    # === Text out ===

    def detokenize(self, ids):
        """`[B][T]` ids -> `[B]` texts, each read up to its first `</s>`, without `<pad>` and
        `<s>`: the graph's `detokenize`."""
        return [self.join([self.vocabulary[i] for i in _kept_ids(row)]) for row in ids]

    def join(self, tokens):
        """Token strings of one text -> the text (joiners and `##` glued to the piece
        before)."""
        if self.kind == "char":
            return "".join(tokens)
        text = " ".join(tokens)
        if self.kind == "wordpiece":
            text = text.replace(" " + SUFFIX, "")
        text = text.replace(" " + JOINER, "")
        return text[len(JOINER):] if text.startswith(JOINER) else text


def normal_form(name):
    """A Unicode normal form's name as `unicodedata` takes it, None for no normalisation
    (any false value, as the graph tokenizer reads it); `ValueError` for anything else.

    >>> normal_form("nfkc"), normal_form(False)
    ('NFKC', None)
    """
    if not name:
        return None
    if not isinstance(name, str) or name.upper() not in NORMAL_FORMS:
        raise ValueError(f"normalization must be one of {list(NORMAL_FORMS)} or None. "
                         f"Received: normalization={name!r}")
    return name.upper()


def _words_with_joiners(text):
    """Words (runs of letters and numbers) and single other characters, split at ASCII
    spaces; a piece that starts where the one before it ended carries a leading `￭`."""
    spans, start = [], None  # [(begin, end)] in characters
    for index, char in enumerate(text):
        if unicodedata.category(char)[0] in "LN":
            start = index if start is None else start
            continue
        if start is not None:
            spans.append((start, index))
            start = None
        if char not in ASCII_SPACES:
            spans.append((index, index + 1))  # punctuation: a piece of its own
    if start is not None:
        spans.append((start, len(text)))
    words, previous_end = [], None
    for begin, end in spans:
        words.append(JOINER + text[begin:end] if begin == previous_end else text[begin:end])
        previous_end = end
    return words


def _longest_units(word, ids):
    """`word` (at most `MAX_BYTES_PER_WORD` bytes) cut greedily into the longest units of
    `ids` (continuations `##...`)."""
    units, begin = [], 0
    while begin < len(word):
        prefix = SUFFIX if begin else ""
        end = next((end for end in range(len(word), begin, -1)
                    if prefix + word[begin:end] in ids), None)
        if end is None:
            return [RESERVED_TOKENS[UNK_ID]]
        units.append(prefix + word[begin:end])
        begin = end
    return units


def _kept_ids(row):
    """The ids of one row before its first `</s>`, without `<pad>` and `<s>`."""
    kept = []
    for index in row:
        if index == END_ID:
            break
        if index not in (PAD_ID, START_ID):
            kept.append(int(index))
    return kept
