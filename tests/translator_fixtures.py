"""A tiny translator, and the same trained until it reproduces 20 pairs exactly."""

import keras

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
