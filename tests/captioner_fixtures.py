"""Sixteen drawn scenes and captioners overfit on them (shared by the captioner tests)."""

import keras
import numpy as np
import pytest

import kseq
from kseq.data.datasets.shapes_captions import shapes_captions
from testing import build_optimizer, training_batches

IMAGE_SIZE = 32
EXAMPLES = shapes_captions(train_size=16, valid_size=0, test_size=0, image_size=IMAGE_SIZE,
                           seed=5)["train"]
TINY = dict(image_size=IMAGE_SIZE, hidden_dim=32, num_layers=1, num_heads=2,
            intermediate_dim=64, filters=[16, 32], dropout=0.0, max_target_length=12)


def build(decoder="transformer"):
    return kseq.zoo.captioner("small_cnn", decoder=decoder, train_data=EXAMPLES,
                              recipe={"training": {"peak_learning_rate": 5e-3,
                                                   "warmup_steps": 30,
                                                   "label_smoothing": 0.0}}, **TINY)


def training_data(model):
    """What `overfit` trains on: `model.preprocessor.training_dataset(EXAMPLES, [12],
    batch_size=16, shuffle=False)`, its one batch of all 16 scenes built once per worker
    (`testing.training_batches`): every captioner of `build` (either decoder, with or
    without augmentation) has the same preprocessor, so the same batch."""
    return training_batches(model.preprocessor, EXAMPLES, [12], 16)


def overfit(decoder, epochs=150):
    # One batch of all 16 scenes a step: the transformer decoder reproduces every caption
    # (greedy and beam 4) from step 100 on, the attention RNN from step 80 on.
    keras.utils.set_random_seed(0)
    model = build_optimizer(build(decoder))
    model.fit(training_data(model).repeat(epochs), epochs=1, steps_per_epoch=epochs,
              verbose=0)
    return model


def images():
    return [image for image, _ in EXAMPLES]


def captions():
    return [caption for _, caption in EXAMPLES]


def decoded(model, encoded):
    """The pixels the model sees for encoded images (uint8 [B, H, W, 3])."""
    import tensorflow as tf

    return model.preprocessor.images(tf.constant(encoded, tf.string))[0].numpy()


@pytest.fixture(scope="module")
def overfit_captioner(shared_models):
    return shared_models.get("captioner-transformer", lambda: overfit("transformer"))


def rgba_png(height=6, width=9):
    """A PNG with a transparent left half over a black-and-red right half."""
    import tensorflow as tf

    pixels = np.zeros((height, width, 4), np.uint8)
    pixels[:, width // 2:, 0] = 255
    pixels[:, width // 2:, 3] = 255
    return tf.io.encode_png(pixels).numpy()


# --- Group B (captioners): the bilingual captioner, trained once per run and shared by
# tests/models/test_multilingual_captioner.py and tests/export/test_captioner_export.py
# (whose one export child serves it with the one-language export).

FRENCH = {"a": "un", "an": "un", "above": "dessus", "below": "dessous", "blue": "bleu",
          "circle": "cercle", "cross": "croix", "diamond": "losange", "green": "vert",
          "left": "gauche", "of": "de", "orange": "orange", "purple": "violet", "red": "rouge",
          "right": "droite", "square": "carré", "triangle": "triangle", "yellow": "jaune"}


def french(caption):
    """The scene caption word for word in French (the second language of the bilingual)."""
    return " ".join(FRENCH[word] for word in caption.split())


def bilingual_splits():
    """The 16 scenes captioned in English and in French, each caption tagged (`2en`/`2fr`)."""
    from kseq.data.datasets.multilingual_captions import multilingual_splits

    return multilingual_splits({"en": {"train": EXAMPLES},
                                "fr": {"train": [(png, french(c)) for png, c in EXAMPLES]}})


def overfit_bilingual():
    """A tiny captioner overfit on both languages: both come back exactly (greedy) from
    step 75 on; 110 steps, about 1.45 times that, for other CPUs' rounding."""
    train = bilingual_splits()["train"]
    keras.utils.set_random_seed(0)
    model = kseq.zoo.captioner("small_cnn", train_data=train,
                               recipe={"training": {"peak_learning_rate": 5e-3,
                                                    "warmup_steps": 30, "label_smoothing": 0.0}},
                               **{**TINY, "max_target_length": 14})
    data = model.preprocessor.training_dataset(train, [14], batch_size=32, shuffle=False)
    build_optimizer(model).fit(data.cache().repeat(110), epochs=1, steps_per_epoch=110,
                               verbose=0)
    return model


@pytest.fixture(scope="module")
def bilingual_captioner(shared_models):
    return shared_models.get("captioner-bilingual", overfit_bilingual)
