"""The image classifier: `SequenceClassifier` over an `ImageEncoder` (one model, two input kinds).

Its export (image bytes in, bad rows flagged) is served by tests/export/test_classifier_export.py,
in the one child that serves the text classifier's and the tagger's exports too.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from image_classifier_fixtures import EXAMPLES, SHAPES, build, draw, overfit


@pytest.fixture(scope="module")
def trained(shared_models):
    """Trained once per run: tests/export/test_classifier_export.py exports the same model."""
    return shared_models.get("image-classifier-attention", lambda: overfit("attention"))


@pytest.mark.slow
def test_it_overfits_and_answers_for_arrays_bytes_and_files(trained, tmp_path):
    images = [image for image, _ in EXAMPLES]
    truth = [label for _, label in EXAMPLES]
    assert [label for label, _ in trained.predict_labels(images)] == truth
    path = str(tmp_path / "frame.png")
    with open(path, "wb") as handle:
        handle.write(images[2])
    arrays = trained.predict_labels([draw(SHAPES[0], 0), path])
    assert [label for label, _ in arrays] == ["bar", "frame"]
    scores = trained.evaluate_labels(EXAMPLES)
    assert scores["accuracy"] == 1.0 and scores["confusion_matrix"][1] == [0, 4, 0]


@pytest.mark.slow  # uses the module's trained model (or export), seconds to build
def test_top_k_probabilities_sum_to_one(trained):
    top = trained.predict_labels([EXAMPLES[0][0]], top_k=3)[0]
    assert [label for label, _ in top][0] == "bar"
    assert sum(p for _, p in top) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow  # uses the module's trained model (or export), seconds to build
def test_bad_images_and_labels_are_refused_naming_them(trained):
    with pytest.raises(kseq.errors.KseqError, match=r"1 image\(s\) could not be decoded.*row 2"):
        trained.predict_labels([EXAMPLES[0][0], b"not an image"])
    with pytest.raises(kseq.errors.KseqError, match="Row 2: the label must be one of"):
        trained.preprocessor.to_dataset([(EXAMPLES[0][0], "bar"), (EXAMPLES[1][0], "star")])
    with pytest.raises(kseq.errors.KseqError, match="image model trains on encoded.*row 1 = a str"):
        trained.preprocessor.to_dataset([("picture.png", "bar")])
    with pytest.raises(kseq.errors.KseqError, match="1 training image"):
        trained.preprocessor.to_dataset([(EXAMPLES[0][0][:-20], "bar")])


@pytest.mark.slow
def test_a_training_image_that_does_not_decode_is_padding():
    pre = kseq.models.ImageClassifierPreprocessor(list(SHAPES), (8, 8))
    _, labels = pre(tf.constant([EXAMPLES[0][0], b"junk"]), tf.constant(["dot", "dot"]))
    assert labels.numpy().tolist() == [1, -1]


@pytest.mark.slow
def test_max_pooling_and_keras_round_trip(tmp_path):
    model = build("max")
    path = str(tmp_path / "images.keras")
    model.save(path)
    loaded = kseq.models.SequenceClassifier.from_config(model.get_config())
    restored = keras.saving.load_model(path)
    images = [image for image, _ in EXAMPLES[:4]]
    np.testing.assert_allclose(restored.probabilities(images)[0],
                               model.probabilities(images)[0], atol=1e-6)
    assert loaded.preprocessor.image_size == (24, 24) and loaded.pooling == "max"


def test_an_encoder_and_a_preprocessor_of_other_inputs_are_refused():
    tokenizer = kseq.text.WordTokenizer.build_vocabulary(["a b"])
    text = kseq.models.ClassifierPreprocessor(tokenizer, ["x", "y"], 8)
    image_encoder = kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn([4]), (8, 8))
    with pytest.raises(kseq.errors.KseqError, match="must read the same input"):
        kseq.models.SequenceClassifier(image_encoder, text)
    images = kseq.models.ImageClassifierPreprocessor(["x", "y"], (16, 16))
    with pytest.raises(kseq.errors.KseqError, match="agree on the image size"):
        kseq.models.SequenceClassifier(image_encoder, images)
