"""Training loses nothing: real SIGKILLs, torn checkpoints, a full disk, a NaN loss.

The tests run in order on one run folder (module fixtures), each starting from
what the one before left, as a user's commands would.
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import numpy as np
import pytest

from kseq import zoo
from kseq.cli import main
from kseq.errors import KseqError
from kseq.training.run_folder import RunFolder
from kseq.training.run import _model_from_config, train
from kseq.training.checkpoints import CheckpointStore

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}
PRESET = "numbers_fr_tiny"
# Smaller still, one bucket (one traced shape): 6 batches an epoch. Dropout on, so an exact
# resume also needs the dropout layers' seed states back.
OVERRIDES = {"data": {"train_size": 192, "valid_size": 8, "test_size": 8},
             "model": {"dropout": 0.1},
             "training": {"boundaries": [32], "bleu_subset": 0}}  # 0: no validation BLEU
KILL_AT_STEP = 8  # SIGKILL inside the write of the step-8 checkpoint (epoch 2, batch 2)

# The child trains through kseq.training.train with `Model.save_weights` (checkpoints)
# or `Model.save` (the final model) patched to write a torn file and SIGKILL itself.
CHILD = textwrap.dedent("""
    import json, os, signal, sys, keras
    from kseq.training import train
    output, mode, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    overrides = json.loads(sys.argv[4])

    if mode == "kill-in-checkpoint-write":
        original_weights = keras.Model.save_weights
        def torn_save_weights(self, path, *args, **kwargs):
            original_weights(self, path, *args, **kwargs)
            if int(self.optimizer.iterations.numpy()) == {kill_at}:
                with open(path, "r+b") as handle:
                    handle.truncate(os.path.getsize(path) // 2)
                os.kill(os.getpid(), signal.SIGKILL)
        keras.Model.save_weights = torn_save_weights

    if mode == "kill-in-final-save":
        original = keras.Model.save
        def torn_save(self, path, *args, **kwargs):
            original(self, path, *args, **kwargs)
            with open(path, "r+b") as handle:
                handle.truncate(3190)  # the torn file size the issue reports
            os.kill(os.getpid(), signal.SIGKILL)
        keras.Model.save = torn_save
    train("{preset}", output, epochs=epochs, save_every_steps=4, verbose=0,
          overrides=overrides)
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


@contextlib.contextmanager
def file_size_limit(size):
    """A full disk for this process: writes past `size` bytes fail with EFBIG (no SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


_LOADED = {}  # a .keras file's SHA-256: its (weights, step); the same bytes load alike


def weights_and_step(path):
    key = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if key not in _LOADED:  # the tests read one model.keras several times: loaded once
        model = keras.saving.load_model(path)
        _LOADED[key] = model.get_weights(), int(model.optimizer.iterations.numpy())
    return _LOADED[key]


def assert_same_weights(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    output = tmp_path_factory.mktemp("uninterrupted")
    model, _, _ = train(PRESET, str(output), epochs=2, save_every_steps=4, verbose=0,
                        overrides=OVERRIDES)
    assert not (output / "backup").exists() and (output / "model.keras").is_file()
    # The model `train` returns is the one it wrote to model.keras (not loaded again here).
    return model.get_weights(), int(model.optimizer.iterations.numpy())


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory):
    """A run SIGKILLed inside a checkpoint write, then resumed: `(folder, backup names, log)`."""
    folder = tmp_path_factory.mktemp("killed")
    killed = run_child(folder, "kill-in-checkpoint-write", 2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    names = sorted(p.name for p in (folder / "backup").iterdir())
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        train(PRESET, str(folder), epochs=2, save_every_steps=4, verbose=0,
              overrides=OVERRIDES)
    return folder, names, log.getvalue()


@pytest.mark.slow
def test_killed_run_resumes_the_data_and_equals_an_uninterrupted_one(resumed_run,
                                                                     uninterrupted):
    run_folder, names, out = resumed_run
    assert names[1:] == ["step-000000004.json", "step-000000004.weights.h5"]
    assert len(names) == 3 and names[0].startswith(".kseq-partial-")  # the torn write
    assert "resuming at step 4 (epoch 1, batch 4; training to epoch 2)" in out
    weights, step = weights_and_step(run_folder / "model.keras")
    expected_weights, expected_step = uninterrupted
    assert step == expected_step == 12
    assert_same_weights(weights, expected_weights)
    assert not (run_folder / "backup").exists()
    history = (run_folder / "history.csv").read_text().splitlines()
    # The killed run logged no epoch; had it, the resumed epoch's row would be replaced.
    assert [row.split(",")[0] for row in history[1:]] == ["0", "1"]
    assert "val_bleu" not in history[0]  # bleu_subset 0 turned the validation off


@pytest.mark.slow
def test_full_disk_stops_with_one_line_and_keeps_the_model(resumed_run, capsys):
    run_folder = resumed_run[0]
    before = (run_folder / "model.keras").read_bytes()

    recipe = run_folder.parent / "small_recipe.json"
    recipe.write_text(json.dumps(zoo.merge(zoo.load_recipe(PRESET), OVERRIDES)))
    # In this process (no second TensorFlow start): small files (CSV, JSON, PNG) fit under
    # 64 KB; the ~300 KB checkpoint does not.
    with file_size_limit(64 * 1024):
        code = main(["train", str(recipe), "--output", str(run_folder), "--epochs", "1",
                     "--save-every", "4"])
    cli = capsys.readouterr()
    assert code == 2, cli.err[-2000:]
    assert "Traceback" not in cli.err
    errors = [line for line in cli.err.splitlines() if line.startswith("kseq: error:")]
    assert len(errors) == 1 and "Could not write a checkpoint" in errors[0]
    assert str(run_folder / "backup") in errors[0] and "File too large" in errors[0]
    leftovers = [p.name for p in (run_folder / "backup").iterdir()]
    assert all(not name.startswith(".kseq-partial") for name in leftovers), leftovers
    assert (run_folder / "model.keras").read_bytes() == before
    assert weights_and_step(run_folder / "model.keras")[1] == 12


@pytest.mark.slow
def test_kill_in_the_final_save_keeps_the_good_model_and_the_rerun_finishes(resumed_run,
                                                                           capsys):
    run_folder = resumed_run[0]
    good = (run_folder / "model.keras").read_bytes()
    good_step = weights_and_step(run_folder / "model.keras")[1]  # it loads: a good model
    killed = run_child(run_folder, "kill-in-final-save", 1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    # The torn file was a temporary name: model.keras is still the good one, byte for byte
    # (the same weights and step without loading it a second time).
    assert (run_folder / "model.keras").read_bytes() == good
    assert (run_folder / "backup").is_dir()

    train(PRESET, str(run_folder), epochs=1, save_every_steps=4, verbose=0, overrides=OVERRIDES)
    # The checkpoint written when training ended is marked finished: only the save is redone.
    assert "resuming at step 18" in capsys.readouterr().out
    assert weights_and_step(run_folder / "model.keras")[1] == good_step + 6 == 18
    assert not (run_folder / "backup").exists()
    leftovers = [p.name for p in run_folder.iterdir() if p.name.startswith(".kseq-partial")]
    assert leftovers == []


@pytest.mark.slow
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


@pytest.mark.slow
def test_checkpoint_store_skips_each_kind_of_bad_checkpoint(tmp_path, capsys):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
    model.compile("adam", "mse")
    store = CheckpointStore(str(tmp_path))
    for _ in range(2):  # two checkpoints: steps 1 and 2
        model.fit(np.ones((2, 2)), np.ones((2, 3)), verbose=0)
        store.save(model, steps_per_epoch=5, target_epochs=1)
    assert store.steps() == [2, 1] and store.latest()["step"] == 2
    weights = tmp_path / "step-000000002.weights.h5"
    torn = weights.read_bytes()[:-100]  # torn by a full disk
    weights.unlink()
    assert store.latest()["step"] == 1
    assert "step-000000002.weights.h5 is missing" in capsys.readouterr().out
    weights.write_bytes(torn)
    assert store.latest()["step"] == 1
    assert "step-000000002.weights.h5 is damaged" in capsys.readouterr().out
    (tmp_path / "step-000000001.json").write_text('{"step": 1, "weights_')  # cut
    assert store.latest() is None
    assert "step-000000001.json is unreadable" in capsys.readouterr().out

    model.fit(np.ones((2, 2)), np.ones((2, 3)), verbose=0)
    metadata = store.save(model, steps_per_epoch=5, target_epochs=1)  # keeps the newest two
    assert store.steps() == [3, 2] and store.latest() == metadata
    fresh = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
    fresh.compile("adam", "mse")
    store.load(fresh, metadata)
    assert int(fresh.optimizer.iterations.numpy()) == 3
    assert_same_weights(fresh.get_weights(), model.get_weights())


class PoisonWeightsAtStep(keras.callbacks.Callback):
    """Makes one weight NaN after step `step` while that step's loss was finite."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) == self.step:
            weight = self.model.trainable_weights[0]
            weight.assign(np.full(weight.shape, np.nan, dtype="float32"))


@pytest.mark.slow
def test_non_finite_weights_never_replace_a_good_model(resumed_run, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(resumed_run[0], folder)
    before = (folder / "model.keras").read_bytes()
    step = weights_and_step(folder / "model.keras")[1]
    with pytest.raises(KseqError, match="non-finite weights"):
        train(PRESET, str(folder), epochs=1, save_every_steps=4, verbose=0,
              overrides=OVERRIDES, extra_callbacks=[PoisonWeightsAtStep(step + 6)])
    assert (folder / "model.keras").read_bytes() == before  # the continued run saved nothing
    kept = CheckpointStore(str(folder / "backup")).latest()
    assert kept["step"] == step + 6  # written in that step before the weights went bad
