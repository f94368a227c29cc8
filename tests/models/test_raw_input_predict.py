"""`predict` / `predict_on_batch` on raw inputs (texts, image bytes or files, sentences)
through the preprocessor; model inputs keep going to Keras's own `predict`, unchanged.

Untrained tiny models: the numbers compared come from one model either way.
"""

import numpy as np
import pytest
import tensorflow as tf

import classifier_fixtures
import image_classifier_fixtures
import kseq
import tagger_fixtures

TEXTS = [text for text, _ in classifier_fixtures.EXAMPLES[:5]] + ["", "see you at 6"]


@pytest.fixture(scope="module")
def classifier():
    return classifier_fixtures.build("ngrams")


@pytest.fixture(scope="module")
def tagger():
    return tagger_fixtures.build("rnn")


def label_probabilities(model, inputs):
    """`[N, C]` probabilities from `predict_labels` (all classes, label-name order)."""
    rows = model.predict_labels(inputs, top_k=len(model.label_names))
    return np.array([[dict(pairs).get(name, 0.0) for name in model.label_names]
                     for pairs in rows], "float32")


@pytest.mark.slow  # a model build and a few eager runs: ~3 s
def test_classifier_predict_on_texts_gives_predict_labels_probabilities(classifier):
    probabilities = classifier.predict(TEXTS)
    assert probabilities.shape == (len(TEXTS), 3) and probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities, label_probabilities(classifier, TEXTS),
                               rtol=1e-6, atol=1e-7)
    sums = probabilities.sum(axis=1)
    np.testing.assert_allclose(np.delete(sums, 5), 1.0, rtol=1e-5)
    assert probabilities[5].tolist() == [0.0, 0.0, 0.0]  # "": no token, as the export says
    assert [classifier.label_names[i] for i in np.delete(probabilities.argmax(1), 5)] == [
        label for i, (label, _) in enumerate(classifier.predict_labels(TEXTS)) if i != 5]
    for same in (classifier.predict(np.array(TEXTS)), classifier.predict(tf.constant(TEXTS)),
                 classifier.predict(tuple(TEXTS), batch_size=2),
                 classifier.predict_on_batch(TEXTS)):
        np.testing.assert_allclose(same, probabilities, rtol=1e-6, atol=1e-7)
    assert classifier.predict([]).shape == (0, 3)


@pytest.mark.slow  # Keras builds its predict function: ~2 s
def test_classifier_model_inputs_still_give_keras_logits(classifier):
    ids = classifier.preprocessor.inference_inputs(tf.constant(TEXTS))["token_ids"]
    logits = classifier({"token_ids": ids}, training=False).numpy()
    np.testing.assert_allclose(classifier.predict({"token_ids": ids.numpy()}, verbose=0),
                               logits, rtol=1e-5, atol=1e-6)
    dataset = tf.data.Dataset.from_tensor_slices({"token_ids": ids}).batch(3)
    np.testing.assert_allclose(classifier.predict(dataset, verbose=0), logits, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(classifier.predict_on_batch({"token_ids": ids}), logits,
                               rtol=1e-5, atol=1e-6)
    assert not np.allclose(logits.sum(axis=1), 1.0)  # logits, not probabilities


@pytest.mark.slow  # uses the module's classifier (seconds to build)
def test_bad_raw_inputs_are_refused_in_one_line(classifier):
    for bad, match in [("see you at 6", "list of strings"), (["ok", 3], "item 1 is int")]:
        with pytest.raises(kseq.errors.KseqError, match=match) as caught:
            classifier.predict(bad)
        assert "\n" not in str(caught.value)
    with pytest.raises(kseq.errors.KseqError, match="steps=2"):
        classifier.predict(["ok"], steps=2)


@pytest.mark.slow  # a model build, Keras's predict function: ~4 s
def test_image_classifier_predict_on_bytes_and_files(tmp_path):
    model = image_classifier_fixtures.build()
    encoded = [image for image, _ in image_classifier_fixtures.EXAMPLES[:3]]
    path = tmp_path / "glyph.png"
    path.write_bytes(image_classifier_fixtures.EXAMPLES[4][0])
    inputs = encoded + [str(path)]
    probabilities = model.predict(inputs)
    assert probabilities.shape == (4, 3)
    np.testing.assert_allclose(probabilities, label_probabilities(model, inputs), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(model.predict(tf.constant(encoded)), probabilities[:3],
                               rtol=1e-6, atol=1e-7)
    images = model.preprocessor.inference_inputs(tf.constant(encoded))["images"]  # uint8
    np.testing.assert_allclose(model.predict({"images": images.numpy()}, verbose=0),
                               model({"images": images}, training=False).numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.slow  # a model build and a few eager runs: ~3 s
def test_tagger_predict_gives_each_tagged_word_its_probabilities(tagger):
    sentences = [s for s, _ in tagger_fixtures.EXAMPLES[:3]] + [["bo kar", "lumi"], ""]
    probabilities = tagger.predict(sentences)
    tagged = tagger.tag(sentences)
    width = max(len(tags) for _, tags in tagged)
    assert probabilities.shape == (5, width, len(tagger.tag_names))
    # The same numbers from the model's own output at each word's first character.
    joined = tf.constant([s if isinstance(s, str) else " ".join(w.replace(" ", "_") for w in s)
                          for s in sentences])
    inputs = tagger.preprocessor.inference_inputs(joined)
    logits = tagger({"char_ids": inputs["char_ids"]}, training=False).numpy()  # [B, T, C]
    for row, (_, tags) in enumerate(tagged):
        starts = np.flatnonzero(inputs["starts"][row].numpy())
        expected = tf.nn.softmax(logits[row, starts]).numpy()
        np.testing.assert_allclose(probabilities[row, : len(tags)], expected, rtol=1e-5,
                                   atol=1e-6)
        assert [tagger.tag_names[i] for i in probabilities[row, : len(tags)].argmax(1)] == tags
        assert not probabilities[row, len(tags):].any()  # padding rows are 0
    assert [len(tags) for _, tags in tagged] == [  # every word tagged, "bo kar" one word
        len(s.split()) if isinstance(s, str) else len(s) for s in sentences]
    text = sentences[:3]
    for same in (tagger.predict(tf.constant(text)), tagger.predict_on_batch(text),
                 tagger.predict(np.array(text), batch_size=1)):
        np.testing.assert_allclose(same, probabilities[:3], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tagger.predict({"char_ids": inputs["char_ids"].numpy()},
                                              verbose=0), logits, rtol=1e-5, atol=1e-6)
