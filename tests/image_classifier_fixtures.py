"""Twelve drawn pictures of three shapes and a small CNN classifier overfit on them."""

import keras
import numpy as np
import tensorflow as tf

import kseq
from testing import build_optimizer

IMAGE_SIZE = 24
SHAPES = ("bar", "dot", "frame")


def draw(shape, seed):
    """A black `shape` on white at a random place and size: uint8 `[H, W, 3]`."""
    rng = np.random.default_rng(seed)
    image = np.full((IMAGE_SIZE, IMAGE_SIZE, 3), 255, np.uint8)
    size = int(rng.integers(8, 12))
    top, left = (int(x) for x in rng.integers(1, IMAGE_SIZE - size - 1, 2))
    if shape == "bar":
        image[top:top + size, left + size // 2 - 1:left + size // 2 + 1] = 0
    elif shape == "dot":
        rows, cols = np.mgrid[:IMAGE_SIZE, :IMAGE_SIZE]
        centre = size / 2
        image[(rows - top - centre) ** 2 + (cols - left - centre) ** 2 <= centre ** 2] = 0
    else:
        image[top:top + size, left:left + size] = 0
        image[top + 2:top + size - 2, left + 2:left + size - 2] = 255
    return image


def make_examples(count=12):
    return [(tf.io.encode_png(draw(SHAPES[i % 3], i)).numpy(), SHAPES[i % 3])
            for i in range(count)]


EXAMPLES = make_examples()
TINY = dict(image_size=IMAGE_SIZE, hidden_dim=16, filters=[8, 16], dropout=0.0)


def build(pooling="mean", **options):
    return kseq.zoo.classifier("small_cnn", train_data=EXAMPLES, pooling=pooling,
                               recipe={"training": {"peak_learning_rate": 1e-2,
                                                    "warmup_steps": 10,
                                                    "label_smoothing": 0.0}},
                               **{**TINY, **options})


def overfit(pooling="mean", steps=60):
    keras.utils.set_random_seed(0)
    model = build_optimizer(build(pooling))
    data = model.preprocessor.training_dataset(EXAMPLES, [1], batch_size=12, shuffle=False)
    model.fit(data.cache().repeat(steps), epochs=1, steps_per_epoch=steps, verbose=0)
    return model
