"""Training loses nothing: real SIGKILLs, torn checkpoints, a full disk, a NaN loss.

The tests run in order on one run folder (module fixtures), each starting from
what the one before left, as a user's commands would.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from kseq import zoo
from kseq.cli import main
from kseq.run_folder import RunFolder
from kseq.training import _model_from_config, train
from kseq.training_checkpoints import CheckpointStore

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}
PRESET = "numbers_fr_tiny"  # no dropout
# Smaller still, and one bucket (one traced shape): 6 batches an epoch.
OVERRIDES = {"data": {"train_size": 192, "valid_size": 8, "test_size": 8},
             "training": {"boundaries": [32], "bleu_subset": 4}}
KILL_AT_STEP = 10  # epoch 2, batch 4; checkpoints every 4 steps: 4 and 8 exist

# The child trains through kseq.training.train with one extra callback (or a patched
# `Model.save`) that SIGKILLs its own process at a chosen moment.
CHILD = textwrap.dedent("""
    import json, os, signal, sys, keras
    from kseq.training import train
    output, mode, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    overrides = json.loads(sys.argv[4])

    class KillAtStep(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if int(self.model.optimizer.iterations.numpy()) == {kill_at}:
                os.kill(os.getpid(), signal.SIGKILL)

    if mode == "kill-in-final-save":
        original = keras.Model.save
        def torn_save(self, path, *args, **kwargs):
            original(self, path, *args, **kwargs)
            with open(path, "r+b") as handle:
                handle.truncate(3190)  # the torn file size the issue reports
            os.kill(os.getpid(), signal.SIGKILL)
        keras.Model.save = torn_save
    callbacks = [KillAtStep()] if mode == "kill-at-step" else []
    train("{preset}", output, epochs=epochs, save_every_steps=4, verbose=0,
          extra_callbacks=callbacks, overrides=overrides)
""").replace("{kill_at}", str(KILL_AT_STEP)).replace("{preset}", PRESET)


def run_child(output, mode, epochs, limit_file_size=None):
    def limit():
        if limit_file_size:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG instead

    return subprocess.run([sys.executable, "-c", CHILD, str(output), mode, str(epochs),
                           json.dumps(OVERRIDES)],
                          env=ENV, capture_output=True, text=True, timeout=600,
                          preexec_fn=limit)


def weights_and_step(path):
    model = keras.saving.load_model(path)
    return model.get_weights(), int(model.optimizer.iterations.numpy())


def assert_same_weights(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    output = tmp_path_factory.mktemp("uninterrupted")
    train(PRESET, str(output), epochs=2, save_every_steps=4, verbose=0, overrides=OVERRIDES)
    assert not (output / "backup").exists()
    return weights_and_step(output / "model.keras")


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("killed")


@pytest.mark.slow
def test_killed_run_resumes_the_data_and_equals_an_uninterrupted_one(
        run_folder, uninterrupted, capsys):
    killed = run_child(run_folder, "kill-at-step", 2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    backup = run_folder / "backup"
    assert sorted(p.name for p in backup.iterdir()) == [
        "step-000000004.json", "step-000000004.weights.h5",
        "step-000000008.json", "step-000000008.weights.h5"]
    # A torn metadata file (a kill or a full disk) must cost one checkpoint, not the run.
    (backup / "step-000000008.json").write_text("")

    train(PRESET, str(run_folder), epochs=2, save_every_steps=4, verbose=0, overrides=OVERRIDES)
    out = capsys.readouterr().out
    assert "checkpoint at step 8 skipped" in out and "step-000000008.json" in out
    assert "resuming at step 4 (epoch 1, batch 4; training to epoch 2)" in out
    weights, step = weights_and_step(run_folder / "model.keras")
    expected_weights, expected_step = uninterrupted
    assert step == expected_step == 12
    assert_same_weights(weights, expected_weights)
    assert not (run_folder / "backup").exists()
    history = (run_folder / "history.csv").read_text().splitlines()
    # The killed run logged no epoch; had it, the resumed epoch's row would be replaced.
    assert [row.split(",")[0] for row in history[1:]] == ["0", "1"]


@pytest.mark.slow
def test_full_disk_stops_with_one_line_and_keeps_the_model(run_folder):
    before = (run_folder / "model.keras").read_bytes()

    # Small files (CSV, JSON, PNG) fit under 64 KB; the ~300 KB checkpoint does not.
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    recipe = run_folder.parent / "small_recipe.json"
    recipe.write_text(json.dumps(zoo.merge(zoo.load_recipe(PRESET), OVERRIDES)))
    cli = subprocess.run([sys.executable, "-m", "kseq.cli", "train", str(recipe), "--output",
                          str(run_folder), "--epochs", "1", "--save-every", "4"],
                         env=ENV, capture_output=True, text=True, timeout=600, preexec_fn=limit)
    assert cli.returncode == 2, cli.stderr[-2000:]
    assert "Traceback" not in cli.stderr
    errors = [line for line in cli.stderr.splitlines() if line.startswith("kseq: error:")]
    assert len(errors) == 1 and "Could not write a checkpoint" in errors[0]
    assert str(run_folder / "backup") in errors[0] and "File too large" in errors[0]
    leftovers = [p.name for p in (run_folder / "backup").iterdir()]
    assert all(not name.startswith(".kseq-partial") for name in leftovers), leftovers
    assert (run_folder / "model.keras").read_bytes() == before
    assert weights_and_step(run_folder / "model.keras")[1] == 12


@pytest.mark.slow
def test_kill_in_the_final_save_keeps_the_good_model_and_the_rerun_finishes(run_folder, capsys):
    good_weights, good_step = weights_and_step(run_folder / "model.keras")
    killed = run_child(run_folder, "kill-in-final-save", 1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    # The torn file was a temporary name: model.keras is still the good one.
    weights, step = weights_and_step(run_folder / "model.keras")
    assert step == good_step
    assert_same_weights(weights, good_weights)
    assert (run_folder / "backup").is_dir()

    train(PRESET, str(run_folder), epochs=1, save_every_steps=4, verbose=0, overrides=OVERRIDES)
    assert "resuming at step 18" in capsys.readouterr().out  # the checkpoint written at the end
    assert weights_and_step(run_folder / "model.keras")[1] == 18
    assert not (run_folder / "backup").exists()
    leftovers = [p.name for p in run_folder.iterdir() if p.name.startswith(".kseq-partial")]
    assert leftovers == []


def test_non_finite_loss_stops_keeps_the_last_finite_checkpoint_and_exits_2(tmp_path, capsys):
    recipe = zoo.merge(zoo.load_recipe(PRESET), OVERRIDES)
    recipe["training"]["peak_learning_rate"] = 1e8  # non-finite within a few steps (8 here)
    recipe["training"]["clipnorm"] = 1e30
    recipe_path = tmp_path / "exploding.json"
    recipe_path.write_text(json.dumps(recipe))
    output = tmp_path / "run"
    code = main(["train", str(recipe_path), "--output", str(output), "--epochs", "2",
                 "--save-every", "1"])
    captured = capsys.readouterr()
    assert code == 2
    errors = [line for line in captured.err.splitlines() if line.startswith("kseq: error:")]
    assert len(errors) == 1 and "The loss became" in errors[0], captured.err
    assert "no model was saved" in errors[0] and "last finite checkpoint" in errors[0]
    assert not (output / "model.keras").exists()
    checkpoints = sorted((output / "backup").glob("step-*.json"))
    assert checkpoints, "the last finite checkpoint must stay"
    bad_step = int(errors[0].split(" at step ")[1].split(";")[0])
    saved = json.loads(checkpoints[-1].read_text())
    assert saved["step"] < bad_step - 1  # step bad - 1's weights gave the bad loss
    model = _model_from_config(RunFolder(str(output)), recipe)
    CheckpointStore(str(output / "backup")).load(model, saved)
    assert all(np.all(np.isfinite(w)) for w in model.get_weights())
