"""Vocabulary coverage and extension (#48 item 3, library): `unknown_token_share` on a
hand-made example; `extend_vocabulary` keeps old ids and answers old inputs exactly as
before (greedy translations, classifier and tagger probabilities), new tokens get new ids."""

import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.models.vocabulary_extension import extend_vocabulary, unknown_token_share
from kseq.text import UNK_ID
from translator_fixtures import PAIRS


def test_unknown_token_share_counts_pieces_as_the_model_reads_them():
    tok = kseq.text.WordTokenizer(list(kseq.text.RESERVED_TOKENS) + ["the", "film", "￭."],
                                  lowercase=True)
    pre = kseq.models.ClassifierPreprocessor(tok, ["a", "b"], 16)
    # Pieces (lower-cased): the film ￭. | the plot ￭, the plot | none: 3 of 8 unknown.
    share, unknown = unknown_token_share(pre, ["The film.", "the plot, the PLOT", ""])
    assert unknown == [("plot", 2), ("￭,", 1)]
    assert share == pytest.approx(3 / 8)
    chars = kseq.text.CharTokenizer(list(kseq.text.RESERVED_TOKENS) + list("ab "))
    tagger_pre = kseq.models.TaggerPreprocessor(chars, ["X"], 16)
    assert unknown_token_share(tagger_pre, [["ab", "ac"]]) == (0.2, [("c", 1)])
    with pytest.raises(kseq.errors.KseqError, match=r"`side` must be one of \['text'\]"):
        unknown_token_share(pre, ["x"], side="target")


def test_translator_keeps_old_ids_and_greedy_outputs(overfit_translator):
    model = overfit_translator
    sources = [source for source, _ in PAIRS]
    bigger = extend_vocabulary(model, {"source": ["zebra", "giraffe"], "target": ["zèbre"]})
    old_source, new_source = model.source_tokenizer.vocabulary, bigger.source_tokenizer.vocabulary
    assert new_source == old_source + ["zebra", "giraffe"]
    assert bigger.target_tokenizer.vocabulary == model.target_tokenizer.vocabulary + ["zèbre"]
    assert bigger.translate(sources, beam_size=1) == [target for _, target in PAIRS]
    ids = bigger.source_tokenizer.tokenize(["zebra giraffe"]).to_list()[0]
    assert ids == [len(old_source), len(old_source) + 1]
    # The new source rows copy <unk>'s: a sentence with new words reads as it did before.
    unknown = [f"{source} zebra" for source in sources[:4]]
    assert bigger.translate(unknown, beam_size=1) == model.translate(unknown, beam_size=1)
    assert model.source_tokenizer.tokenize(["zebra"]).to_list() == [[UNK_ID]]  # unchanged


def test_classifier_and_tagger_answer_old_inputs_as_before():
    import classifier_fixtures
    import tagger_fixtures

    for model, new, texts, name in [
            (classifier_fixtures.build("rnn"), ["plot", "twist"],  # "plot" is known
             [text for text, _ in classifier_fixtures.EXAMPLES], "token_ids"),
            (tagger_fixtures.build(), ["q", "x"],  # new characters
             [sentence for sentence, _ in tagger_fixtures.EXAMPLES[:8]], "char_ids")]:
        bigger = extend_vocabulary(model, new)
        added = [token for token in new if token not in model.preprocessor.tokenizer.vocabulary]
        assert bigger.preprocessor.tokenizer.vocabulary == \
            model.preprocessor.tokenizer.vocabulary + added
        inputs = bigger.preprocessor.inference_inputs(tf.constant(texts))[name]
        np.testing.assert_array_equal(
            inputs, model.preprocessor.inference_inputs(tf.constant(texts))[name])
        np.testing.assert_allclose(bigger({name: inputs}), model({name: inputs}), atol=1e-6)


def test_wordpiece_and_bad_tokens_are_refused_in_one_line():
    pieces = kseq.text.WordPieceTokenizer(list(kseq.text.RESERVED_TOKENS) + ["gr", "##eat"])
    model = kseq.zoo.classifier("rnn", vocab=pieces, labels=["a", "b"], hidden_dim=8)
    with pytest.raises(kseq.errors.KseqError, match="word and char vocabularies"):
        extend_vocabulary(model, ["film"])
    assert extend_vocabulary(model, ["gr"]) is model  # nothing new
    with pytest.raises(kseq.errors.KseqError, match="non-empty string without surrounding"):
        extend_vocabulary(model, [" film"])
