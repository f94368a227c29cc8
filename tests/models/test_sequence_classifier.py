"""The sequence classifier: each encoder and pooling overfits, saves, scores, refuses bad labels."""

import numpy as np
import pytest

import kseq
from classifier_fixtures import EXAMPLES, build, labels_of, overfit
from testing import run_task_test

TEXTS = [text for text, _ in EXAMPLES]
LABELS = [label for _, label in EXAMPLES]


def _overfit_transformer(shared_models):
    return shared_models.get("classifier-transformer-attention",
                             lambda: overfit("transformer", "attention"))


# Every encoder overfits once, and every pooling with one of them (the n-gram encoder is
# fastText's mean); the Transformer's model is the one the tests below share.
@pytest.mark.slow
@pytest.mark.parametrize("encoder, pooling", [("transformer", "attention"), ("rnn", "last"),
                                              ("conv", "attention"), ("ngrams", "mean"),
                                              ("textcnn", "max")])
def test_each_encoder_and_pooling_overfits_and_passes_the_task_test(encoder, pooling,
                                                                     shared_models):
    model = (_overfit_transformer(shared_models) if encoder == "transformer"
             else overfit(encoder, pooling))
    # The input routes and the real-rows step (`[B, D]` pooled rows into the projection)
    # do not depend on the encoder: checked with the Transformer's.
    run_task_test(model, lambda: build(encoder, pooling), EXAMPLES, labels_of, boundaries=(16,),
                  input_routes=encoder == "transformer", real_rows_step=encoder == "transformer")


@pytest.fixture(scope="module")
def trained(shared_models):
    return _overfit_transformer(shared_models)


def test_ngram_encoder_pads_and_hashes_pairs():
    encoder = kseq.models.encoders.NgramEncoder(10, embedding_dim=4, ngram_buckets=16)
    ids = np.array([[4, 5, 6, 0], [4, 5, 0, 0]], "int32")
    bigrams = encoder.bigram_ids(ids).numpy()
    assert bigrams[0, 0] == 0 and bigrams[0, 3] == 0 and bigrams[1, 2:].tolist() == [0, 0]
    assert bigrams[0, 1] == bigrams[1, 1] == ((4 * 10 + 5) * 486_187_739 + 1) % (2**34 - 41) % 16 + 1
    memory = encoder(ids)
    np.testing.assert_allclose(memory["final"][1], np.mean(
        np.concatenate([memory["states"][1, :2], memory["states"][1, 5:6]]), axis=0), atol=1e-6)
    model = build("ngrams", "mean")
    alone = model.probabilities([TEXTS[0]])[0]
    padded = model.probabilities([TEXTS[0], " ".join(["film"] * 15)])[0]
    np.testing.assert_allclose(alone[0], padded[0], atol=1e-6)


def test_text_cnn_encoder_max_pools_real_positions_only():
    encoder = kseq.models.encoders.TextCnnEncoder(10, embedding_dim=4, kernel_sizes=(1, 3),
                                                  filters=5, dropout=0.0)
    ids = np.array([[4, 5, 6, 0, 0, 0], [4, 5, 6, 7, 8, 9]], "int32")
    memory = encoder(ids)
    states = memory["states"].numpy()
    assert states.shape == (2, 6, 10) and np.all(states >= 0) and not states[0, 3:].any()
    np.testing.assert_allclose(memory["final"][0], states[0, :3].max(axis=0))
    # Width 1 sees one word: equal at every shared position. Width 3 sees the next word at
    # position 2: padding reads as the sentence's end, not as a token.
    np.testing.assert_allclose(states[0, :3, :5], states[1, :3, :5], atol=1e-6)
    alone = encoder(ids[:1, :3])["states"].numpy()
    np.testing.assert_allclose(alone, states[:1, :3], atol=1e-6)
    for widths, named in (((), r"kernel_sizes=\(\)"), (3, "kernel_sizes=3"),
                          ([3, 0], r"kernel_sizes\[1\]"), ([3, 3], "repeat")):
        with pytest.raises(kseq.errors.KseqError, match=named):
            kseq.models.encoders.TextCnnEncoder(10, kernel_sizes=widths)
    model = build("textcnn", "max")
    padded = model.probabilities([TEXTS[0], " ".join(["film"] * 15)])[0]
    np.testing.assert_allclose(model.probabilities([TEXTS[0]])[0][0], padded[0], atol=1e-6)


def test_ngram_buckets_collide_about_as_often_as_random_draws():
    encoder = kseq.models.encoders.NgramEncoder(8000, embedding_dim=2, ngram_buckets=50_000)
    rng = np.random.default_rng(0)
    pairs = rng.integers(4, 8000, size=(20_000, 2)).astype("int32")
    buckets = encoder.bigram_ids(pairs).numpy()[:, 1]
    expected = 50_000 * (1 - (1 - 1 / 50_000) ** 20_000)  # distinct buckets of random draws
    assert abs(len(set(buckets.tolist())) - expected) < 0.02 * expected
    # A linear hash maps (a, b) and (a + 1, b - 3) together: this one does not.
    shifted = encoder.bigram_ids(pairs + np.array([1, -3], "int32")).numpy()[:, 1]
    assert np.mean(shifted == buckets) < 0.01


@pytest.mark.slow
def test_padding_never_changes_a_prediction(trained):
    alone = trained.probabilities([TEXTS[0]])[0]
    padded = trained.probabilities([TEXTS[0], " ".join(["film"] * 15)])[0]
    np.testing.assert_allclose(alone[0], padded[0], atol=1e-5)


@pytest.mark.slow  # uses the module's trained model (or export), seconds to build
def test_top_k_empty_lines_and_scores(trained):
    best = trained.predict_labels(TEXTS[:2], top_k=3)
    assert [row[0][0] for row in best] == LABELS[:2]
    assert all(abs(sum(p for _, p in row) - 1.0) < 1e-5 for row in best)
    assert trained.predict_labels(["", "   "]) == [("", 0.0), ("", 0.0)]
    scores = trained.evaluate_labels(EXAMPLES)
    assert scores["accuracy"] == 1.0 and scores["macro_f1"] == 1.0 and scores["mcc"] == 1.0
    assert np.trace(scores["confusion_matrix"]) == len(EXAMPLES)


@pytest.mark.slow  # uses the module's trained model (or export), seconds to build
def test_bad_labels_are_refused_naming_the_row(trained):
    pre = trained.preprocessor
    for labels, named in ((["positive", "sarcastic"], "Row 2"), ([0, 3], "Row 2"),
                          ([True], "Row 1"), ([-1], "Row 1")):  # rows counted from 1
        with pytest.raises(kseq.errors.KseqError, match=named):
            pre.to_dataset([("a film", label) for label in labels])
    assert pre.check_labels(["neutral", 0]) == [pre.label_names.index("neutral"), 0]


def test_scores_against_hand_computed_values():
    from kseq.metrics.classification_scores import classification_scores, matthews_correlation

    scores = classification_scores([0, 0, 0, 1, 1, 2], [0, 0, 1, 1, 2, 2], ["a", "b", "c"])
    assert scores["accuracy"] == round(4 / 6, 4)
    assert scores["per_class"]["a"] == {"precision": 1.0, "recall": round(2 / 3, 4),
                                        "f1": 0.8, "support": 3}
    assert scores["per_class"]["b"]["f1"] == 0.5 and scores["per_class"]["c"]["f1"] == round(2 / 3, 4)
    assert scores["macro_f1"] == round((0.8 + 0.5 + 2 / 3) / 3, 4)
    # Binary MCC = (TP·TN − FP·FN) / sqrt(...): TP 2, TN 1, FP 1, FN 0.
    assert abs(matthews_correlation([[1, 1], [0, 2]]) - (2 * 1 - 0) / np.sqrt(3 * 2 * 1 * 2)) < 1e-9


def test_pooling_last_needs_an_rnn():
    with pytest.raises(kseq.errors.KseqError, match="last"):
        build("transformer", "last")


def test_class_weights_weigh_the_loss_per_class():
    loss = kseq.metrics.MaskedSparseCrossEntropy(pad_id=-1, class_weights=[1.0, 3.0])
    logits = np.log(np.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]], "float32"))
    labels = np.array([0, 1, -1])
    expected = (np.log(2) + 3 * -np.log(0.2)) / 4  # weighted mean; the -1 row is padding
    assert abs(float(loss(labels, logits)) - expected) < 1e-5
    imbalanced = EXAMPLES + [(text, label) for text, label in EXAMPLES if label == "positive"] * 3
    model = kseq.zoo.classifier("rnn", train_data=imbalanced, hidden_dim=8,
                                recipe={"training": {"class_weight": "balanced"}})
    weights = dict(zip(model.label_names, model.loss.class_weights))
    assert weights["positive"] < weights["negative"] == weights["neutral"]
    with pytest.raises(kseq.errors.KseqError, match="sarcastic"):
        kseq.zoo.classifier("rnn", train_data=EXAMPLES, hidden_dim=8,
                            recipe={"training": {"class_weight": {"sarcastic": 2.0}}})
