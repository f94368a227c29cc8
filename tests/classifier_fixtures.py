"""A tiny three-class text set and classifiers overfit on it (shared by classifier tests)."""

import keras
import numpy as np

import kseq
from testing import build_optimizer

KEYWORDS = {"great": "positive", "awful": "negative", "okay": "neutral"}
FILLER = "the a film plot was and its cast story ending music quite".split()


def make_examples(count=24, seed=0):
    rng = np.random.default_rng(seed)
    examples = []
    for index in range(count):
        keyword = list(KEYWORDS)[index % 3]
        words = list(rng.choice(FILLER, size=int(rng.integers(2, 7))))
        words.insert(int(rng.integers(0, len(words) + 1)), keyword)
        examples.append((" ".join(words), KEYWORDS[keyword]))
    return examples


EXAMPLES = make_examples()
TINY = {"transformer": dict(num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32),
        "rnn": dict(hidden_dim=16, cell="gru"),
        "conv": dict(num_layers=2, hidden_dim=16, embedding_dim=16),
        "ngrams": dict(embedding_dim=16, ngram_buckets=64),
        "textcnn": dict(embedding_dim=16, kernel_sizes=[2, 3], filters=8)}


def build(encoder="transformer", pooling="mean", **options):
    return kseq.zoo.classifier(encoder, train_data=EXAMPLES, pooling=pooling, max_length=16,
                               dropout=0.0, recipe={"training": {"peak_learning_rate": 1e-2,
                                                                 "warmup_steps": 10,
                                                                 "label_smoothing": 0.0}},
                               **{**TINY[encoder], **options})


# Every encoder/pooling pair here reproduces the labels after 20-30 steps (measured):
# 50 leaves a margin.
def overfit(encoder="transformer", pooling="mean", steps=50):
    keras.utils.set_random_seed(0)
    model = build_optimizer(build(encoder, pooling))
    data = model.preprocessor.training_dataset(EXAMPLES, [16], batch_size=24, shuffle=False)
    model.fit(data.cache().repeat(steps), epochs=1, steps_per_epoch=steps, verbose=0)
    return model


def labels_of(model, texts):
    return [label for label, _ in model.predict_labels(list(texts))]
