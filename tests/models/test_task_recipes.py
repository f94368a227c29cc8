"""Every task class builds itself from a recipe (`from_recipe`) and scores pairs with
`evaluate(pairs)`, one `EvaluationResult` whose `summary()` is one line; other calls of
`evaluate` stay Keras's."""

import json
import re

import pytest

import kseq
from kseq.models import recipes
from kseq.models.evaluation_result import EvaluationResult

CLASSIFIED = [("great film", "positive"), ("dull film", "negative"), ("okay plot", "neutral")]
TAGGED = [("the dog runs", "DET NOUN VERB"), (["a", "new york", "cat"], ["DET", "NOUN", "NOUN"])]
TINY_TRAINING = {"training": {"warmup_steps": 10}}


def test_the_translator_builds_from_a_recipe_and_its_data_builder(monkeypatch):
    pairs = [("one two", "un deux"), ("three", "trois")]
    monkeypatch.setitem(recipes.DATA_BUILDERS, "fake", lambda: {"train": pairs})
    recipe = {"data": {"builder": "fake"}, "model": {"arch": "rnn", "units": 8},
              "tokenizer": {"kind": "word", "shared": True}, "training": {"clipnorm": None}}
    model = kseq.models.Translator.from_recipe(recipe)  # vocabularies from the builder's data
    assert model.source_tokenizer is model.target_tokenizer  # `shared`: one vocabulary
    assert {"one", "un", "trois"} <= set(model.source_tokenizer.vocabulary)
    assert model.recipe == recipe and model.optimizer.clipnorm is None
    source = kseq.text.WordTokenizer.build_vocabulary(["one two"])
    model = kseq.models.Translator.from_recipe({"model": {"arch": "conv", "num_encoder_layers": 1,
                                                          "hidden_dim": 8, "embedding_dim": 8}},
                                               pairs, vocab=(source, None))
    assert model.source_tokenizer is source and "trois" in model.target_tokenizer.vocabulary


def test_the_captioner_builds_from_a_recipe():
    recipe = {"task": "captioner", "model": {"encoder": "small_cnn", "decoder": "attention",
                                             "image_size": 16, "hidden_dim": 8, "filters": [8]}}
    model = kseq.models.Captioner.from_recipe(recipe, [(b"", "a red dot"), (b"", "a blue dot")])
    assert type(model.decoder).__name__ == "RnnDecoder"
    assert {"red", "blue", "dot"} <= set(model.target_tokenizer.vocabulary)


def test_the_classifier_builds_from_a_recipe_with_balanced_class_weights():
    recipe = {"task": "classifier", "model": {"encoder": "rnn", "hidden_dim": 8},
              "training": {"class_weight": "balanced"}}
    model = kseq.models.SequenceClassifier.from_recipe(recipe, CLASSIFIED + CLASSIFIED[:1])
    assert model.label_names == ["negative", "neutral", "positive"]
    assert model.loss.class_weights == [1.3333, 1.3333, 0.6667]
    with pytest.raises(kseq.errors.KseqError, match="Pass `labels`"):
        kseq.models.SequenceClassifier.from_recipe(recipe)


def test_the_tagger_builds_from_a_recipe_joining_words_as_its_preprocessor_does():
    recipe = {"task": "tagger", "model": {"encoder": "rnn", "hidden_dim": 8,
                                          "tag_names": ["DET", "NOUN", "VERB", "ADJ"]}}
    model = kseq.models.SequenceTagger.from_recipe(recipe, TAGGED)
    assert model.tag_names == ["DET", "NOUN", "VERB", "ADJ"]  # the recipe names every tag
    assert "_" in model.preprocessor.tokenizer.vocabulary  # "new york" is read as "new_york"
    assert " " in model.preprocessor.tokenizer.vocabulary
    recipe["model"].pop("tag_names")
    assert kseq.models.SequenceTagger.from_recipe(recipe, TAGGED).tag_names == [
        "DET", "NOUN", "VERB"]


@pytest.mark.slow
def test_the_translator_evaluates_pairs_as_one_result(overfit_translator):
    from translator_fixtures import PAIRS

    result = overfit_translator.evaluate(PAIRS, beam_size=1)
    assert isinstance(result, EvaluationResult)
    assert result["bleu"] == result["chrf"] == 100.0 and result["pairs"] == len(PAIRS)
    assert result.outputs == [target for _, target in PAIRS]
    assert re.fullmatch(r"BLEU 100\.0 chrF 100\.0 \(20 pairs\) \| nrefs:1\|case:mixed\|.*",
                        result.summary())
    assert json.loads(json.dumps(result.to_dict())) == dict(result)  # JSON-ready, no outputs
    assert "hypotheses" not in result


@pytest.mark.slow
def test_the_captioner_evaluates_pairs_as_one_result():
    from captioner_fixtures import EXAMPLES

    recipe = {"task": "captioner", "model": {"image_size": 32, "hidden_dim": 8, "filters": [8],
                                             "num_layers": 1, "num_heads": 2,
                                             "intermediate_dim": 16, "max_target_length": 8}}
    model = kseq.models.Captioner.from_recipe(recipe, EXAMPLES)
    result = model.evaluate(EXAMPLES[:3], beam_size=1)
    assert len(result.outputs) == 3 and result["pairs"] == 3
    assert re.fullmatch(r"BLEU \d+\.\d chrF \d+\.\d \(3 pairs\) \| nrefs:1.*", result.summary())


@pytest.mark.slow
def test_the_classifier_evaluates_pairs_as_one_result_and_keras_evaluates_the_rest():
    recipe = {"task": "classifier", "model": {"encoder": "rnn", "hidden_dim": 8}}
    model = kseq.models.SequenceClassifier.from_recipe(recipe, CLASSIFIED)
    result = model.evaluate(CLASSIFIED)
    scores = model.evaluate_labels(CLASSIFIED)
    assert dict(result) == scores and result["examples"] == 3
    assert result.summary() == (f"accuracy {scores['accuracy']:.3f} macro-F1 "
                                f"{scores['macro_f1']:.3f} (3 examples)")
    # Model inputs (here a tf.data.Dataset) go to Keras's own evaluate: loss and metrics.
    data = model.preprocessor.training_dataset(CLASSIFIED, [8], batch_size=3, shuffle=False)
    loss, accuracy = model.evaluate(data, verbose=0)
    assert loss > 0 and 0 <= accuracy <= 1


def test_the_tagger_evaluates_pairs_as_one_result():
    from tagger_fixtures import EXAMPLES

    recipe = {"task": "tagger", "model": {"encoder": "rnn", "hidden_dim": 8}}
    model = kseq.models.SequenceTagger.from_recipe(recipe, EXAMPLES)
    result = model.evaluate(EXAMPLES[:5])
    predicted = model.tag([sentence for sentence, _ in EXAMPLES[:5]])
    right = sum(" ".join(tags) == gold for (_, tags), (_, gold) in zip(predicted, EXAMPLES))
    assert result["sentence_accuracy"] == round(right / 5, 4) and result["sentences"] == 5
    assert result.summary() == (f"token accuracy {result['token_accuracy']:.3f} sentence "
                                f"accuracy {result['sentence_accuracy']:.3f} (5 sentences)")


def test_a_task_without_pair_scores_says_so():
    from toy_classifier import ToyClassifier, ToyPreprocessor

    tokenizer = kseq.text.WordTokenizer.build_vocabulary(["a b"])
    encoder = kseq.models.encoders.TransformerEncoder(
        tokenizer.vocabulary_size, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
        max_length=16)
    model = ToyClassifier(encoder, ToyPreprocessor(tokenizer, ["small", "big"]))
    assert model.cli_verbs == () and kseq.zoo.describe({"task": "toy"}) == "-"
    with pytest.raises(kseq.errors.KseqError, match="ToyClassifier has no score.*1 pairs"):
        model.evaluate([("a", "small")])
