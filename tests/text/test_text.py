import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.text import CharTokenizer, WordPieceTokenizer, WordTokenizer, tokenizer_from_config

CORPUS = [
    "Bonjour ! Comment allez-vous ?",
    "L'homme a dit : « oui », puis il est parti.",
    "Cliquez sur Fichier - Ouvrir (Ctrl+O)...",
    "quatre-vingt-dix-neuf mille",
    "A 3.5 km, c'est tout.",
]


@pytest.mark.parametrize("cls", [WordTokenizer, CharTokenizer, WordPieceTokenizer])
def test_detokenize_inverts_tokenize(cls):
    tok = cls.build_vocabulary(CORPUS)
    back = [s.decode() for s in tok.detokenize(tok.tokenize(CORPUS)).numpy()]
    assert back == CORPUS


def test_word_pieces_keep_french_spacing_with_joiners():
    tok = WordTokenizer.build_vocabulary(CORPUS)
    pieces = tok.split(tf.constant(["Bonjour ! l'homme"])).to_list()[0]
    assert [p.decode() for p in pieces] == ["Bonjour", "!", "l", "\uffed'", "\uffedhomme"]


def test_reserved_ids_unknown_words_and_specials_in_detokenize():
    tok = WordTokenizer.build_vocabulary(["a b c"])
    assert tok.vocabulary[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    ids = tok.tokenize(["a zebra c"]).to_list()[0]
    assert ids[1] == kseq.text.UNK_ID
    a, c = ids[0], ids[2]
    text = tok.detokenize(np.array([[2, a, c, 3, a, 0]])).numpy()[0].decode()
    assert text == "a c"  # stops at </s>, drops <s> and <pad>


def test_normalisation_options_and_invalid_utf8():
    tok = WordTokenizer.build_vocabulary(["École"], lowercase=True)
    assert tok.vocabulary[4:] == ["école"]
    decomposed = "E\u0301cole"
    assert tok.tokenize([decomposed]).to_list()[0] == [4]  # NFC first
    pieces = tok.split(tok.normalize(tf.constant([b"ab\xffcd"]))).to_list()[0]
    assert [p.decode() for p in pieces] == ["ab", "\uffed\ufffd", "\uffedcd"]


def test_vocabulary_limits_order_and_config_round_trip():
    tok = WordTokenizer.build_vocabulary(["b b b a a c"], max_size=6)
    assert tok.vocabulary[4:] == ["b", "a"]
    again = tokenizer_from_config(tok.get_config())
    assert again.vocabulary == tok.vocabulary and isinstance(again, WordTokenizer)
    with pytest.raises(ValueError, match="reserved tokens"):
        WordTokenizer(["a", "b"])


@pytest.mark.slow
def test_preprocessor_has_no_py_function():
    tok = WordTokenizer.build_vocabulary(["one two"])
    pre = kseq.models.TranslatorPreprocessor(tok, tok, 8, 8)
    graph = tf.function(pre).get_concrete_function(
        tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string)).graph
    ops = {n.op for n in graph.as_graph_def().node}
    ops |= {n.op for f in graph.as_graph_def().library.function for n in f.node_def}
    assert not ops & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}


def test_wordpiece_learns_subwords_and_round_trips_unseen_words():
    corpus = ["les hommes sont partis.", "l'homme est parti !", "partir, partons"] * 20
    tok = WordPieceTokenizer.build_vocabulary(corpus, max_size=40)
    assert any(token.startswith("##") for token in tok.vocabulary)
    text = "les hommes partons !"
    ids = tok.tokenize([text])
    assert ids.to_list()[0].count(kseq.text.UNK_ID) == 0
    assert tok.detokenize(ids).numpy()[0].decode() == text
    again = tokenizer_from_config(tok.get_config())
    assert again.tokenize([text]).to_list() == ids.to_list()
