"""`PlainTokenizer` gives the in-graph tokenizers' tokens and text, without TensorFlow."""

import random
import subprocess
import sys
import unicodedata

import pytest
import tensorflow as tf

from kseq.text import CharTokenizer, PlainTokenizer, WordPieceTokenizer, WordTokenizer
from kseq.text.token_marks import RESERVED_TOKENS

TRICKY = [
    "Bonjour ! l'homme, oui.", "  spaces\t\tand\nnewlines  ", "", "   ",
    "a\x00 great\x7ffilm", "naïve café", "nai\u0308ve cafe\u0301", "ﬁne ½ Ⅻ",
    "ÉCOLE İstanbul ΣΑΣ", "non\u00a0breaking", "l\u2019été «guillemets» — tiret",
    "emoji 😀 and 3.14", "日本語のテキスト。", "(a)[b]{c}", "a--b..c",
    "\u0915\u093f\u0924\u093e\u092c", "tab\u000bvertical", "￭joiner",
    # WordPiece's 100-byte limit, in one- and two-byte characters, with and without a joiner
    "x" * 100, "x" * 101, "é" * 50, "é" * 51, "(" + "x" * 97, "(" + "x" * 98, "x" * 120,
]
INVALID_UTF8 = [b"caf\xc3", b"\xff\xfeab", b"a\xed\xa0\x80b", b"\xe2\x82 x", b"ok \xc3\xa9"]
WORDPIECE_VOCABULARY = list(RESERVED_TOKENS) + [
    "Bon", "##jour", "Bonjour", "!", "l", "\uffed'", "\uffedhomme", "\uffed,", "oui", "\uffed.",
    "na", "##ï", "##ve", "caf", "##é", "x", "##x", "a", "##b", "##c", "spaces", "and", "new",
    "##lines", "café", "great", "film", "\uffed-", "\uffedb", "\uffedc", "é", "##t",
    "\uffedx"]
# Capital letters of Unicode 14 that Python 3.11's `str.lower` knows and TensorFlow 2.21's
# ICU `lower` leaves as they are: five in plane 0, and the Vithkuqi capitals of plane 1.
LOWER_NEWER_THAN_TENSORFLOW = {0x2C2F, 0xA7C0, 0xA7D0, 0xA7D6, 0xA7D8, *range(0x10570, 0x10596)}


def _graph_tokenizers(lowercase, normalization):
    words = WordTokenizer.build_vocabulary(TRICKY, lowercase=lowercase,
                                           normalization=normalization)
    chars = CharTokenizer.build_vocabulary(TRICKY[:8], lowercase=lowercase,
                                           normalization=normalization)
    pieces = WordPieceTokenizer(WORDPIECE_VOCABULARY, lowercase=lowercase,
                                normalization=normalization)
    return words, chars, pieces


def _check_same(graph, texts):
    plain = PlainTokenizer(graph.get_config())
    ids = graph.tokenize(tf.constant(texts, tf.string)).to_list()
    assert plain.tokenize(texts) == ids
    detokenized = graph.detokenize(tf.ragged.constant(ids, tf.int32, ragged_rank=1)).numpy()
    assert plain.detokenize(ids) == [text.decode("utf-8") for text in detokenized]


@pytest.mark.parametrize("lowercase,normalization",
                         [(False, "NFC"), (True, "NFKC"), (False, None)])
def test_tokens_and_text_equal_the_graphs(lowercase, normalization):
    texts = [text.encode("utf-8") for text in TRICKY] + INVALID_UTF8
    for graph in _graph_tokenizers(lowercase, normalization):
        _check_same(graph, texts)


def test_random_texts_agree():
    pool = ("abcXYZ éèçàÉ ßİı ΣσςΑ ЖжЁ 日本 한국 0123٣४ .,;:!?'\"()-–—«»…/\\@#%&*+=<>_ "
            "\u00a0\u2009\u3000\t\n\x00\x85\u200b\u0301\u0308\ufb01\u2163😀👍🏽\uffed")
    generator = random.Random(7)
    texts = ["".join(generator.choice(pool) for _ in range(generator.randint(0, 40)))
             for _ in range(300)]
    texts += [bytes(generator.randrange(256) for _ in range(12)) for _ in range(100)]
    for graph in _graph_tokenizers(lowercase=True, normalization="NFC"):
        _check_same(graph, texts)


def test_every_character_of_planes_zero_and_one_splits_as_in_the_graph():
    """Each character of Unicode's first two planes between two letters: the pieces agree
    except where the two sides read different Unicode tables (see the module docstring)."""
    graph = WordTokenizer(list(RESERVED_TOKENS), lowercase=True, normalization="NFKC")
    plain = PlainTokenizer(graph.get_config())
    points = [p for p in range(0x20000) if not 0xD800 <= p < 0xE000]
    texts = [f"a{chr(point)}b" for point in points]
    pieces = graph.split(graph.normalize(tf.constant(texts))).to_list()
    differing = [point for point, text, theirs in zip(points, texts, pieces)
                 if plain.split([text])[0] != [piece.decode("utf-8") for piece in theirs]]
    explained = [point for point in differing if unicodedata.category(chr(point)) == "Cn"
                 or point in LOWER_NEWER_THAN_TENSORFLOW]
    assert differing == explained
    assert len(differing) < 3000  # unassigned in Python's database, letters in RE2's


def test_wordpiece_cuts_longest_units_first():
    plain = PlainTokenizer({"kind": "wordpiece", "vocabulary": WORDPIECE_VOCABULARY})
    assert plain.split(["Bonjour naïve xxx cafés"]) == [
        ["Bonjour", "na", "##ï", "##ve", "x", "##x", "##x", "<unk>"]]
    assert plain.split(["x" * 101]) == [["<unk>"]]  # over 100 bytes
    assert plain.detokenize([[2, 4, 5, 8, 9, 10, 3, 4]]) == ["Bonjour l'homme"]


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="kind"):
        PlainTokenizer({"kind": "bpe", "vocabulary": list(RESERVED_TOKENS)})
    with pytest.raises(ValueError, match="reserved tokens"):
        PlainTokenizer({"kind": "word", "vocabulary": ["a", "b"]})
    with pytest.raises(ValueError, match=r"repeat.*\['a'\]"):
        PlainTokenizer({"kind": "word", "vocabulary": list(RESERVED_TOKENS) + ["a", "a"]})
    for tokenizer in (lambda n: PlainTokenizer({"kind": "word", "normalization": n,
                                                "vocabulary": list(RESERVED_TOKENS)}),
                      lambda n: WordTokenizer(list(RESERVED_TOKENS), normalization=n)):
        with pytest.raises(ValueError, match="normalization=.NFX"):
            tokenizer("NFX")  # the graph's tokenizer now fails as early, in one line
    # No normalisation: None or any false value, as the graph reads it.
    graph = WordTokenizer(list(RESERVED_TOKENS), normalization=False)
    assert PlainTokenizer(graph.get_config()).split(["ﬁne"]) == [["ﬁne"]]


def test_a_lower_case_normal_form_and_a_lone_surrogate_read_as_in_the_graph():
    graph = WordTokenizer.build_vocabulary(["fine a b"], normalization="nfkc")
    plain = PlainTokenizer(graph.get_config())
    assert plain.split(["ﬁne"]) == [["fine"]]
    text = "a\ud800b"  # `check_texts` hands the graph its surrogatepass bytes
    ids = graph.tokenize(tf.constant([text.encode("utf-8", "surrogatepass")])).to_list()
    assert plain.tokenize([text]) == ids


def test_the_old_module_path_still_imports():
    from kseq.models.translator import ctranslate2_translator as old
    from kseq.ctranslate2 import translator

    assert old.CTranslate2Translator is translator.CTranslate2Translator
    assert old.INSTALL_HINT == translator.INSTALL_HINT


def test_the_plain_modules_load_without_tensorflow():
    code = ("import sys; sys.argv = ['kseq']  # as the command imports kseq: rooms on use\n"
            "from kseq.text import PlainTokenizer\n"
            "import kseq.ctranslate2\n"
            "print('tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
