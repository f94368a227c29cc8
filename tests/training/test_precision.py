"""Mixed precision for every task and architecture, and float32 models out of `kseq.training.train`.

Each precision x architecture: built under the precision, a few steps of its
own optimizer on a tiny set give finite, falling losses; the float32 copy
(what `train` saves) holds the same weights and decodes (greedy search, run
eagerly where a tiny model's search costs less than its trace, all but the
captioner's; the searches are traced, greedy and beam, in float32 by the
decoding and model tests).
"""

import contextlib
import shutil
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.cli import main
from kseq.training import load_trained, train
from kseq.training.distribution import STRATEGIES
from kseq.training.precision import PRECISIONS, precision_scope, rebuilt_at_precision

import captioner_fixtures
import classifier_fixtures
import tagger_fixtures
import translator_fixtures
from testing import build_optimizer, first_batch, functions_run_eagerly

TRAINING = {"peak_learning_rate": 1e-2, "warmup_steps": 5, "label_smoothing": 0.0}


def _translator(arch):
    options = {"transformer": dict(num_layers=1, num_heads=2, hidden_dim=16,
                                   intermediate_dim=32),
               "attention": dict(units=16, embedding_dim=16),
               "conv": dict(embedding_dim=16, hidden_dim=16, num_layers=1)}[arch]
    return lambda: kseq.zoo.translator(arch, train_data=translator_fixtures.PAIRS, dropout=0.0,
                                       max_source_length=16, max_target_length=16, **options)


ARCHITECTURES = {
    "translator-transformer": (_translator("transformer"), translator_fixtures.PAIRS, 16),
    "translator-attention": (_translator("attention"), translator_fixtures.PAIRS, 16),
    "translator-conv": (_translator("conv"), translator_fixtures.PAIRS, 16),
    # Eight scenes letterboxed to 16x16: on a CPU, mixed_float16's fit on all 16 scenes at
    # 32x32 cost about six times mixed_bfloat16's (float16 kernels); the point is the
    # precision, and the losses still fall at every step (3.22 -> 2.28).
    "captioner-cnn-attention": (lambda: kseq.zoo.captioner(
        "small_cnn", decoder="attention", train_data=captioner_fixtures.EXAMPLES,
        **dict(captioner_fixtures.TINY, image_size=16)), captioner_fixtures.EXAMPLES[:8], 12),
    "classifier-transformer": (classifier_fixtures.build, classifier_fixtures.EXAMPLES, 16),
    "tagger-rnn": (tagger_fixtures.build, tagger_fixtures.EXAMPLES, 48),
}


def _decodes(model, examples):
    """One output per input from the model's own verb (float32 copy, in inference)."""
    inputs = [source for source, _ in examples[:2]]
    if isinstance(model, kseq.models.Translator):
        return model.translate(inputs, beam_size=1)
    if isinstance(model, kseq.models.Captioner):
        return model.caption(inputs, beam_size=1)
    if isinstance(model, kseq.models.SequenceClassifier):
        return model.predict_labels(inputs)
    return model.tag(inputs)


# Every architecture in mixed_float16, the precision that can overflow (masks, logits) and
# needs loss scaling; mixed_bfloat16 (float32's range) on the two attention stacks only, to
# keep the suite inside its time budget.
CASES = [pytest.param(name, precision, marks=() if (name, precision) == (
    "translator-transformer", "mixed_bfloat16") else pytest.mark.slow)
    for name in ARCHITECTURES for precision in PRECISIONS[1:]
    if precision == "mixed_float16" or name in ("translator-transformer",
                                                 "captioner-cnn-attention")]


@pytest.mark.slow
@pytest.mark.parametrize("name,precision", CASES)
def test_each_architecture_trains_in_mixed_precision_and_decodes_in_float32(name, precision):
    build, examples, boundary = ARCHITECTURES[name]
    with precision_scope(precision):
        model = build().compile_from_recipe(TRAINING)
    assert model.dtype_policy.name == precision and keras.config.dtype_policy().name == "float32"
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer) == (
        precision == "mixed_float16")
    # One batch, eight steps as one epoch each: each epoch's loss is that step's loss.
    # (The batch holds ids and pixels, no precision: an architecture's second precision
    # reuses the first one's.)
    batch = first_batch(model.preprocessor, examples, boundary, len(examples))
    assert len(batch[1]) == len(examples)  # one full batch
    data = tf.data.Dataset.from_tensors(batch).repeat()
    losses = build_optimizer(model).fit(data, epochs=8, steps_per_epoch=1,
                                        verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    saved = rebuilt_at_precision(model, "float32", TRAINING)
    assert saved.dtype_policy.name == "float32"
    for a, b in zip(saved.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    # The point is the float32 copy, not the search's graph (traced by the decoding tests).
    with contextlib.nullcontext() if name.startswith("captioner") else functions_run_eagerly():
        assert len(_decodes(saved, examples)) == 2


TINY_RUN = {"data": {"train_size": 48, "valid_size": 0, "test_size": 4},
            "training": {"boundaries": [32], "batch_size": 16}}


@pytest.fixture(scope="module")
def mixed_float16_run(tmp_path_factory):
    """One epoch of `numbers_fr_tiny` trained in mixed_float16, for both tests that continue a
    finished run (each on its own copy): its model.keras is float32 with plain Adam state, as
    a float32 run's is, so one training serves both."""
    output = tmp_path_factory.mktemp("mixed_float16") / "run"
    model, _, _ = train("numbers_fr_tiny", str(output), epochs=1, verbose=0, overrides=TINY_RUN,
                        precision="mixed_float16", save_every_steps=100)
    return output, model, keras.config.dtype_policy().name


def _copy_of(run, tmp_path):
    output = tmp_path / "run"
    shutil.copytree(run, output)
    return output


@pytest.mark.slow
def test_train_in_mixed_float16_saves_a_float32_model_that_continues(mixed_float16_run,
                                                                     tmp_path):
    run, model, policy_after = mixed_float16_run
    assert policy_after == "float32"  # the global policy is restored
    output = str(_copy_of(run, tmp_path))
    reloaded = load_trained(output)
    assert reloaded.dtype_policy.name == model.dtype_policy.name == "float32"
    with functions_run_eagerly():  # as above: the reloaded model, not the search's graph
        assert len(reloaded.translate(["forty-two"], beam_size=1)) == 1
    steps = int(reloaded.optimizer.iterations.numpy())
    assert steps >= 1  # the optimizer state travels in the float32 file
    again, _, _ = train("numbers_fr_tiny", output, epochs=1, verbose=0, overrides=TINY_RUN,
                        precision="mixed_bfloat16", save_every_steps=100)
    assert int(again.optimizer.iterations.numpy()) == steps + 3  # 48 pairs / 16 a batch


class _Seen(Exception):
    """Raised by `_StartSeen(stop=True)`: the start was all a test wanted to see."""


class _StartSeen(keras.callbacks.Callback):
    """What the model `train` trains looks like when training begins (then, with `stop`,
    `_Seen` ends the run before its first step: the folder keeps its model.keras)."""

    def __init__(self, stop=False):
        super().__init__()
        self.stop = stop

    def on_train_begin(self, logs=None):
        if hasattr(self, "step"):  # a run finishing an interrupted epoch fits twice
            return
        optimizer = self.model.optimizer
        self.step = int(optimizer.iterations.numpy())
        self.loss_scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        inner = getattr(optimizer, "inner_optimizer", optimizer)
        self.optimizer_values = [variable.numpy() for variable in inner.variables]
        self.policies = {layer.dtype_policy.name for layer in self.model._flatten_layers()}
        if self.stop:
            raise _Seen()


def _continues_at(output, precision, capsys, fit):
    """Continues the finished run in `output` at `precision` (one epoch if `fit`, else up to
    its first step), checking that its step, optimizer state and history.csv are kept."""
    finished = load_trained(output)  # the float32 model.keras, with its optimizer's state
    step = int(finished.optimizer.iterations.numpy())
    values = [variable.numpy() for variable in finished.optimizer.variables]
    assert step > 0 and sum(np.count_nonzero(value) for value in values[2:]) > 0  # moments
    history = (output / "history.csv").read_text().splitlines()
    seen = _StartSeen(stop=not fit)
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.nullcontext() if fit else pytest.raises(_Seen):
        warnings.simplefilter("always")
        model, _, _ = train("numbers_fr_tiny", str(output), epochs=1, verbose=0,
                            overrides=TINY_RUN, precision=precision, save_every_steps=100,
                            extra_callbacks=[seen])
    assert not [w for w in caught if "Skipping variable loading" in str(w.message)]
    assert f"model.keras at step {step} (epoch {len(history)}," in capsys.readouterr().out
    assert seen.step == step and seen.policies == {precision}, (seen.step, seen.policies)
    assert seen.loss_scaled == (precision == "mixed_float16")
    assert len(seen.optimizer_values) == len(values)
    for started, saved in zip(seen.optimizer_values, values):
        np.testing.assert_array_equal(started, saved)
    rows = (output / "history.csv").read_text().splitlines()
    assert rows[:len(history)] == history, rows
    if fit:
        assert int(model.optimizer.iterations.numpy()) == step + 3  # 48 pairs / 16 a batch
        assert len(rows) == len(history) + 1 and rows[-1].startswith(f"{len(history) - 1},")
    else:
        assert len(rows) == len(history)


@pytest.mark.slow
def test_a_finished_run_continues_at_any_precision_with_its_step_moments_and_history(
        mixed_float16_run, tmp_path, capsys):
    """A finished run (the shared one: float32 model.keras and plain Adam state, as any run
    leaves) continued in mixed_float16 (an epoch: what it saves, float32 again, was trained
    in mixed_float16), then in float32 and in mixed_bfloat16 (up to the first step): each
    starts at the step and with the Adam moments of the model.keras before it, every layer
    at its precision, and history.csv keeps the earlier epochs' rows."""
    output = _copy_of(mixed_float16_run[0], tmp_path)
    for precision in ("mixed_float16", "float32", "mixed_bfloat16"):
        _continues_at(output, precision, capsys, fit=precision == "mixed_float16")
    assert keras.config.dtype_policy().name == "float32"


@pytest.mark.parametrize("argv,message", [
    (["--precision", "float8"], "argument --precision: invalid choice: 'float8'"),
    (["--strategy", "tpu"], "argument --strategy: invalid choice: 'tpu'"),
    (["--strategy", "multi-worker"], "TF_CONFIG is not set"),
])
def test_bad_device_options_are_one_line_and_exit_2(argv, message, tmp_path, capsys,
                                                    monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert main(["train", "numbers_fr_tiny", "--output", str(tmp_path / "run")] + argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("kseq: error: ") and message in error and error.count("\n") == 1
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("tf_config,message", [
    ("{not json", "TF_CONFIG is not valid JSON"),
    ('{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 1}}',
     "TF_CONFIG must say which task this process is"),
    ('{"cluster": {"worker": ["no-port"]}, "task": {"type": "worker", "index": 0}}',
     "cluster.worker must be a list of \"host:port\" strings"),
])
def test_a_malformed_tf_config_is_one_line_and_exit_2(tf_config, message, tmp_path, capsys,
                                                      monkeypatch):
    monkeypatch.setenv("TF_CONFIG", tf_config)
    argv = ["train", "numbers_fr_tiny", "--output", str(tmp_path / "run"),
            "--strategy", "multi-worker"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_recipe_values_are_checked_and_the_cli_choices_match(tmp_path):
    for key, value in (("precision", "float8"), ("strategy", "gpus"), ("jit_compile", "yes")):
        with pytest.raises(kseq.errors.KseqError, match=f"training.{key}"):
            train("numbers_fr_tiny", str(tmp_path / "run"), overrides={"training": {key: value}})
    from kseq.cli import build_parser

    parser = build_parser()  # every name the library takes, the command line takes too
    for precision in PRECISIONS:
        assert parser.parse_args(["train", "r", "--output", "o", "--precision",
                                  precision]).precision == precision
    for strategy in STRATEGIES:
        assert parser.parse_args(["train", "r", "--output", "o", "--strategy",
                                  strategy]).strategy == strategy
    assert parser.parse_args(["train", "r", "--output", "o", "--no-jit-compile"]).jit_compile is False
