import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(__file__))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _tensorflow_seeded():
    """TensorFlow's global seed, once per worker: setting it clears TensorFlow's kernel
    caches, so every compiled function's next call pays its set-up again (0.03 s -> 3-5 s
    for a tiny captioner's greedy search), and a test using a shared model would pay it
    for each function it calls. A test that needs the seed at a point sets it itself."""
    keras.utils.set_random_seed(1234)


@pytest.fixture(autouse=True)
def _seeded(_tensorflow_seeded):
    # Keras draws the seeds of initializers and dropout layers from Python's `random`.
    random.seed(1234)
    np.random.seed(1234)
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture(scope="session")
def shared_models(tmp_path_factory):
    """Tiny models trained once per run, whatever the number of xdist workers."""
    from shared_models import SharedModels, run_folder

    return SharedModels(run_folder(tmp_path_factory))


@pytest.fixture(scope="session")
def overfit_translator(shared_models):
    from translator_fixtures import overfit_tiny_translator

    return shared_models.get("translator-transformer", overfit_tiny_translator)


# Doctests of kseq/ that load a preset or build and run a model (1-5 s each): marked slow
# like the tests, so `make test-fast` leaves them to `make test`.
SLOW_DOCTESTS = {"kseq.zoo.translator", "kseq.models.task.Task.from_preset",
                 "kseq.models.translator.translator.Translator",
                 "kseq.models.captioner.captioner.Captioner",
                 "kseq.layers.efficientnet_lite0.EfficientNetLite0",
                 "kseq.models.captioner.captioner_preprocessor.CaptionerPreprocessor",
                 "kseq.layers.application_backbone.ApplicationBackbone",
                 "kseq.models.translator.ctranslate2_export.export_ctranslate2",
                 "kseq.ctranslate2.translator.CTranslate2Translator",
                 "kseq.models.language_model.language_model.LanguageModel"}


# The longest files (a minute or more of `make test`), longest first. `--dist loadfile` runs
# each file on one worker and hands files out in collection order, so a long file collected
# last (tests/training/ sorts last) would run on alone after the other worker is done; these
# go first, every other file keeps its place, and tests keep their order within a file.
LONG_FILES_FIRST = [
    "tests/test_examples_and_demo.py",
    "tests/models/test_rnn_and_conv_translators.py",
    "tests/models/test_captioner.py",
    "tests/training/test_precision.py",
    "tests/test_readme_samples.py",
    "tests/test_training_safety.py",
    "tests/models/test_translator.py",
    "tests/test_preset_weights.py",
    "tests/benchmarks/test_translator_benchmark_smoke.py",
    "tests/training/test_distributed_training.py",
    "tests/models/test_sequence_classifier.py",
    "tests/models/test_task.py",
]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
    rank = {name: place for place, name in enumerate(LONG_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable
