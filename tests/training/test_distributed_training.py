"""MirroredStrategy over two logical CPUs trains as one device does on the same global batches.

Two logical devices must be declared before TensorFlow starts, so one child
process does every check of this module and prints the results as JSON.

- Per task (translator, captioner with a frozen backbone, classifier), one
  model under the default strategy and its copy under `MirroredStrategy` take
  the same SGD steps on the same (first two) batches: the weights agree to float
  noise, and each replica of the translator and the captioner projects only its
  real rows. SGD, because Adam turns float noise in gradients that are zero in exact
  arithmetic (attention key biases) into full-size steps of either sign. The
  translator's batches hold different numbers of real tokens in their two
  halves, so a loss averaged per replica (not over the global batch's real
  tokens) would move the weights apart. The one-device twin runs eagerly (the
  same values, without a trace); the mirrored one is traced, as in training.
- `kseq.training.train(..., strategy="mirrored")` against `strategy="auto"`
  (one device) on a tiny recipe (one epoch, 4 steps): the same step count and
  losses, and weights within a small fraction of the distance training moved
  them (Adam). The one-device run is eager too.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from fresh_process import ENV

pytestmark = pytest.mark.slow  # one child process

CHILD = r"""
import json, os, sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
sys.path.insert(0, sys.argv[1])
import keras, numpy as np
import kseq
from kseq.training import train
from kseq.training.distribution import make_strategy
import captioner_fixtures, classifier_fixtures, translator_fixtures

def batches(model, examples, boundary, size):
    return model.preprocessor.training_dataset(examples, [boundary], batch_size=size,
                                               shuffle=False).take(2)

def real_tokens_per_half(batch):
    labels = batch[1].numpy().reshape(len(batch[1]), -1)  # [B, T], or [B, 1] for classes
    half = len(labels) // 2
    return [int(np.sum(labels[:half] != 0)), int(np.sum(labels[half:] != 0))]

def sgd_twins(build, examples, boundary):
    keras.utils.set_random_seed(3)
    one = build()
    data = batches(one, examples, boundary, 8)
    with make_strategy("mirrored").scope():  # the one kseq.training.train uses
        two = build()
        two.set_weights(one.get_weights())
        two.compile(optimizer=keras.optimizers.SGD(0.5), loss=one.loss)
        two.optimizer.build(two.trainable_variables)
    # The one-device reference runs eagerly: two steps of a tiny model cost less than a
    # trace, and give the same values (the traced step equals Keras's: the task tests).
    one.compile(optimizer=keras.optimizers.SGD(0.5), loss=one.loss, run_eagerly=True)
    # Built before `fit`: else the first trace creates the optimizer's variables and
    # TensorFlow traces the mirrored step twice (the tracing is most of this child's time).
    one.optimizer.build(one.trainable_variables)
    # The rank of what each replica's step projects onto the vocabulary: 2 (`[R, D]`, the
    # real rows only) when the real-rows step ran, 3 (`[B, T, D]`) under Keras's own step.
    ranks, project = [], getattr(two, "project", None)
    if project is not None:
        two.project = lambda states: ranks.append(len(states.shape)) or project(states)
    losses = [model.fit(data, verbose=0, shuffle=False).history["loss"] for model in (one, two)]
    return {"weights": max(float(np.max(np.abs(a - b)))
                           for a, b in zip(one.get_weights(), two.get_weights())),
            "losses": losses, "replicas": two.distribute_strategy.num_replicas_in_sync,
            "halves": real_tokens_per_half(next(iter(data))), "ranks": ranks}

results = {
    "translator": sgd_twins(translator_fixtures.tiny_translator, translator_fixtures.PAIRS, 32),
    "captioner": sgd_twins(lambda: kseq.zoo.captioner(
        "small_cnn", decoder="transformer", train_data=captioner_fixtures.EXAMPLES,
        trainable_backbone=False, **captioner_fixtures.TINY), captioner_fixtures.EXAMPLES, 12),
    "classifier": sgd_twins(classifier_fixtures.build, classifier_fixtures.EXAMPLES, 16),
}

overrides = {"data": {"train_size": 64, "valid_size": 0, "test_size": 4},
             "training": {"boundaries": [32], "batch_size": 16}}
runs = {}
for strategy in ("auto", "mirrored"):  # the one-device reference untraced, as above
    keras.utils.set_random_seed(0)
    tf.config.run_functions_eagerly(strategy == "auto")
    model, _, _ = train("numbers_fr_tiny", f"{sys.argv[2]}/{strategy}", epochs=1, verbose=0,
                        overrides=overrides, strategy=strategy, save_every_steps=100)
    history = open(f"{sys.argv[2]}/{strategy}/history.csv").read().splitlines()
    runs[strategy] = {"weights": model.get_weights(), "names": [w.path for w in model.weights],
                      "steps": int(model.optimizer.iterations.numpy()),
                      "replicas": model.distribute_strategy.num_replicas_in_sync,
                      "loss": [float(line.split(",")[1]) for line in history[1:]]}
one, two = runs["auto"], runs["mirrored"]
assert not tf.config.functions_run_eagerly()  # the mirrored run was traced
results["train"] = {
    "steps": [one["steps"], two["steps"]], "replicas": [one["replicas"], two["replicas"]],
    "loss": [one["loss"], two["loss"]],
    "weights": {name: float(np.max(np.abs(a - b)))
                for name, a, b in zip(one["names"], one["weights"], two["weights"])}}
print(json.dumps(results), flush=True)
os._exit(0)  # all is printed: TensorFlow's interpreter teardown (seconds) checks nothing
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = tmp_path_factory.mktemp("mirrored")
    done = subprocess.run([sys.executable, "-c", CHILD, tests, str(runs)], env=ENV,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("task", ["translator", "captioner", "classifier"])
def test_mirrored_sgd_steps_equal_one_device(results, task):
    result = results[task]
    assert result["replicas"] == 2
    np.testing.assert_allclose(result["losses"][1], result["losses"][0], rtol=1e-5)
    assert result["weights"] < 2e-5, result


@pytest.mark.parametrize("task", ["translator", "captioner"])
def test_each_replica_takes_the_real_rows_step(results, task):
    # With the weights equal to one device's (above), whose real-rows step equals Keras's own
    # (`run_task_test` in the task tests), the mirrored real-rows step equals Keras's too.
    ranks = results[task]["ranks"]
    assert ranks and set(ranks) == {2}, ranks


def test_the_translator_batches_split_real_tokens_unevenly(results):
    # Where the halves hold as many real tokens, a per-replica mean would pass too.
    halves = results["translator"]["halves"]
    assert halves[0] != halves[1] and min(halves) > 0


def test_kseq_train_mirrored_matches_one_device(results):
    run = results["train"]
    assert run["replicas"] == [1, 2] and run["steps"] == [4, 4]
    np.testing.assert_allclose(run["loss"][1], run["loss"][0], rtol=1e-3)
    # Attention key biases have no gradient in exact arithmetic (softmax ignores a shift):
    # Adam turns their float noise into steps of either sign, on one device as on two.
    others = {name: d for name, d in run["weights"].items() if not name.endswith("key/bias")}
    assert max(others.values()) < 5e-4, sorted(others.items(), key=lambda kv: kv[1])[-3:]
