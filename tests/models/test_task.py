"""`Task` is general: a toy classifier trains, saves and serves without overriding the base,
and its real-rows train step on `[B, E]` states equals Keras's step."""

import keras
import numpy as np
import tensorflow as tf

import kseq
from kseq.data import numbers_dataset
from toy_classifier import ToyClassifier, ToyPreprocessor

NUMBERS = numbers_dataset("fr", train_size=60, valid_size=0, test_size=0, seed=3)["train"]
# "big" numbers are those read with "thousand": one word decides the class.
PAIRS = [(text, "big" if "thousand" in text else "small") for text, _ in NUMBERS]


def toy_classifier(seed=0):
    keras.utils.set_random_seed(seed)
    tokenizer = kseq.text.WordTokenizer.build_vocabulary([t for t, _ in PAIRS])
    encoder = kseq.models.encoders.TransformerEncoder(
        tokenizer.vocabulary_size, num_layers=1, num_heads=2, hidden_dim=16,
        intermediate_dim=32, dropout=0.0, max_length=16)
    model = ToyClassifier(encoder, ToyPreprocessor(tokenizer, ["small", "big"]))
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=kseq.metrics.MaskedSparseCrossEntropy(pad_id=-1),
                  metrics=[kseq.metrics.MaskedAccuracy(pad_id=-1)])
    return model


def test_toy_classifier_trains_saves_and_serves(tmp_path):
    assert {label for _, label in PAIRS} == {"small", "big"}
    model = toy_classifier()
    data = model.preprocessor.training_dataset(PAIRS, [8, 16], batch_size=16, shuffle=False)
    model.fit(data.cache().repeat(30), epochs=1, verbose=0)
    texts = tf.constant([t for t, _ in PAIRS])
    served = [s.decode() for s in tf.function(model.serve)(texts).numpy()]
    assert served == [label for _, label in PAIRS]
    path = str(tmp_path / "toy.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored.preprocessor, ToyPreprocessor)
    assert restored.preprocessor.labels == ["small", "big"]
    np.testing.assert_allclose(restored(model.preprocessor.inference_inputs(texts)).numpy(),
                               model(model.preprocessor.inference_inputs(texts)).numpy(), atol=1e-5)


def test_real_rows_step_on_pooled_states_equals_keras_step():
    fast, plain = toy_classifier(seed=4), toy_classifier(seed=5)
    plain.set_weights(fast.get_weights())
    plain.train_step = lambda data: keras.Model.train_step(plain, data)
    for model in (fast, plain):
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss=model.loss,
                      metrics=[kseq.metrics.MaskedAccuracy(pad_id=-1)])
    batch = next(iter(fast.preprocessor.training_dataset(PAIRS[:5], [16], batch_size=8,
                                                         shuffle=False)))
    assert batch[1].numpy().tolist()[-3:] == [-1, -1, -1]  # padding rows of the bucket
    ranks, project = [], fast.project
    fast.project = lambda states: ranks.append(len(states.shape)) or project(states)
    for _ in range(2):
        got = fast.train_on_batch(*batch, return_dict=True)
        want = plain.train_on_batch(*batch, return_dict=True)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    assert ranks == [2]  # the fast step ran, on [R, E] real rows
    for a, b in zip(fast.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
