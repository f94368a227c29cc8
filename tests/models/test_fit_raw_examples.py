"""`fit` on raw examples (#48 item 5): pairs, `x=`/`y=` lists and `validation_data=pairs` on
every task through the preprocessor with the recipe's batching; a Keras loss on batches with
padding rows; `kseq.zoo.<task>(file or run folder)`; one input in, one answer out."""

import json
import os

import keras
import numpy as np
import pytest

import kseq
import captioner_fixtures
import classifier_fixtures
import tagger_fixtures
from translator_fixtures import PAIRS

# One bucket and one batch size from the recipe: one trace of the train step per model.
ONE_BUCKET = {"training": {"boundaries": [16], "batch_size": 32, "peak_learning_rate": 1e-2,
                           "warmup_steps": 5, "label_smoothing": 0.0}}


def _changed(model, before):
    return any(not np.array_equal(old, new.numpy())
               for old, new in zip(before, model.trainable_weights))


def test_translator_fit_on_pairs():
    model = kseq.zoo.translator("rnn", train_data=PAIRS, recipe=ONE_BUCKET, units=8,
                                embedding_dim=8, max_source_length=16, max_target_length=16)
    before = [w.numpy().copy() for w in model.trainable_weights]
    model.fit(PAIRS, verbose=0)
    assert _changed(model, before)


def test_classifier_fit_on_x_and_y_lists_with_validation_pairs():
    model = classifier_fixtures.build("rnn")
    texts, labels = zip(*classifier_fixtures.EXAMPLES)
    history = model.fit(x=list(texts), y=np.array(labels), epochs=2, verbose=0,
                        validation_data=classifier_fixtures.EXAMPLES[:6]).history
    assert history["loss"][1] < history["loss"][0] and len(history["val_loss"]) == 2
    assert model.predict_labels("great film") == model.predict_labels(["great film"])[0]


def test_tagger_fit_with_a_keras_loss_sees_no_padding_label():
    # Labels -1 (characters inside words, and the rows that pad the last batch) reach a
    # Keras loss as class 0 with sample weight 0: Keras's sparse cross-entropy refuses -1.
    model = tagger_fixtures.build()
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [w.numpy().copy() for w in model.trainable_weights]
    history = model.fit(tagger_fixtures.EXAMPLES[:20], batch_size=16, verbose=0,
                        validation_data=tagger_fixtures.EXAMPLES[:5]).history
    assert np.isfinite(history["loss"] + history["val_loss"]).all() and _changed(model, before)


def test_captioner_fit_on_image_bytes_and_captions():
    model = kseq.zoo.captioner("small_cnn", train_data=captioner_fixtures.EXAMPLES,
                               recipe=ONE_BUCKET, image_size=16, hidden_dim=8, num_layers=1,
                               num_heads=1, intermediate_dim=8, filters=[4],
                               max_target_length=12)
    before = [w.numpy().copy() for w in model.trainable_weights]
    model.fit(x=captioner_fixtures.images()[:4], y=captioner_fixtures.captions()[:4],
              verbose=0)
    assert _changed(model, before)


def test_training_dataset_batches_as_the_recipe_says():
    tok = kseq.text.WordTokenizer.build_vocabulary([text for text, _ in
                                                    classifier_fixtures.EXAMPLES])
    pre = kseq.models.ClassifierPreprocessor(tok, sorted(classifier_fixtures.KEYWORDS.values()),
                                             16)
    pre.training_defaults = {"boundaries": [4, 8], "batch_size": 5}  # compile_from_recipe's
    shapes = {tuple(x["token_ids"].shape) for x, _ in
              pre.training_dataset(classifier_fixtures.EXAMPLES)}
    assert shapes <= {(5, 4), (5, 8)} and len(shapes) == 2
    assert pre.batching(batch_size=2) == ([4, 8], 2, None)


@pytest.mark.parametrize("x, y, expected", [
    (["great film", "dull film"], ["positive"], "one target per input"),
    (["great film", "dull film"], None, "needs their targets"),
    ("great film", ["positive"], "not one string"),
    ([("great film", "positive"), ("dull", "meh")], None, "Row 2: the label must be"),
])
def test_bad_raw_examples_are_one_line(x, y, expected):
    model = classifier_fixtures.build("rnn")
    with pytest.raises(kseq.errors.KseqError) as error:
        model.fit(x, y, verbose=0)
    message = str(error.value)
    assert expected in message and "Received:" in message and "\n" not in message
    assert "dull film" not in message or "first" in message  # never the whole list


def test_zoo_loads_a_keras_file_and_a_run_folder(tmp_path):
    model = classifier_fixtures.build("rnn")
    path = tmp_path / "mine.keras"
    model.save(path)
    loaded = kseq.zoo.classifier(str(path))
    texts = [text for text, _ in classifier_fixtures.EXAMPLES[:4]]
    np.testing.assert_allclose(loaded.predict(texts), model.predict(texts), atol=1e-6)
    run = tmp_path / "run"
    run.mkdir()
    os.replace(path, run / "model.keras")
    (run / "recipe.json").write_text(json.dumps({"task": "classifier",
                                                 "training": {"batch_size": 3}}))
    from_run = kseq.zoo.classifier(str(run))
    assert from_run.recipe["training"] == {"batch_size": 3}
    assert from_run.preprocessor.batching()[1] == 3
    with pytest.raises(kseq.errors.KseqError, match="holds a classifier .* not a tagger"):
        kseq.zoo.tagger(str(run))
    with pytest.raises(kseq.errors.KseqError, match="No such model file"):
        kseq.zoo.classifier(str(tmp_path / "missing.keras"))


def test_one_string_in_one_answer_out(overfit_translator):
    source, target = PAIRS[0]
    assert overfit_translator.translate(source, beam_size=1) == target
    assert overfit_translator.translate([source], beam_size=1) == [target]
