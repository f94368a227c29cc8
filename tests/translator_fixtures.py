"""A tiny translator, the same trained until it reproduces 20 pairs exactly, and
twin models that compare kseq's real-rows train step with Keras's own."""

import keras
import numpy as np

import kseq
from kseq.data import numbers_dataset
from testing import build_optimizer

PAIRS = numbers_dataset("fr", train_size=20, valid_size=0, test_size=0, seed=5)["train"]


def tiny_translator(pairs=PAIRS, **options):
    settings = dict(num_layers=1, num_heads=2, hidden_dim=32, intermediate_dim=64, dropout=0.0,
                    max_source_length=32, max_target_length=32)
    settings.update(options)
    return kseq.zoo.translator("transformer", train_data=pairs,
                               recipe={"training": {"peak_learning_rate": 0.01,
                                                    "warmup_steps": 30}}, **settings)


def overfit_tiny_translator(steps=120):
    """Reproduces the 20 pairs (greedy and beam 4) from step 60 on (twice that here, for
    other CPUs' rounding).

    The pairs are at most 14 tokens long: one bucket of 16 (not the model's 32)
    halves every step and the trace.
    """
    keras.utils.set_random_seed(0)
    model = build_optimizer(tiny_translator())
    pre = kseq.models.TranslatorPreprocessor(model.source_tokenizer, model.target_tokenizer,
                                             32, 32)
    data = pre.training_dataset(PAIRS, [16], batch_size=20, shuffle=False).cache()
    model.fit(data.repeat(steps), epochs=1, verbose=0)
    return model


def train_step_twins(build=tiny_translator, seed=3):
    """Two identical models from `build()`: kseq's real-rows train step, and Keras's own.

    Compiled with plain SGD: Adam would turn the float noise of zero gradients
    (attention key biases) into full-size steps that differ between any two
    summation orders, so only SGD updates can be compared weight for weight.
    """
    keras.utils.set_random_seed(seed)
    fast, plain = build(), build()
    plain.set_weights(fast.get_weights())
    plain.train_step = lambda data: keras.Model.train_step(plain, data)
    for model in (fast, plain):
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss=model.loss,
                      metrics=[kseq.metrics.MaskedAccuracy()])
    return fast, plain


def assert_twins_train_alike(fast, plain, steps=2):
    """Same loss, accuracy and weights after `steps` steps on a batch that is >30% padding."""
    pre = kseq.models.TranslatorPreprocessor(fast.source_tokenizer, fast.target_tokenizer,
                                             32, 32)
    batch = next(iter(pre.training_dataset(PAIRS, [32], batch_size=10, shuffle=False)))
    assert float(np.mean(batch[1].numpy() == 0)) > 0.3  # the skipped rows are a real share
    ranks, project = [], fast.project
    fast.project = lambda states: ranks.append(len(states.shape)) or project(states)
    for _ in range(steps):
        got = fast.train_on_batch(*batch, return_dict=True)
        want = plain.train_on_batch(*batch, return_dict=True)
        assert set(got) == set(want) == {"loss", "masked_accuracy"}
        for name in got:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    assert ranks and set(ranks) == {2}  # fast projected `[R, D]` real rows (traced once)
    for a, b in zip(fast.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
