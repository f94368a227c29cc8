"""`kseq train --strategy multi-worker`: two real worker processes on 127.0.0.1, one killed.

Two children get a `TF_CONFIG` naming two free local ports and train the tiny
numbers recipe (global batch 16: 8 rows per worker, 4 steps an epoch, 2
epochs, a checkpoint every 2 steps): the chief (worker 0) through the `kseq
train` command, worker 1 through `kseq.training.train` into its own `--output`
with a callback that SIGKILLs its process after step 3 (by then the chief has
written its step-2 checkpoint: step 3's all-reduce needs the chief past step
2's callbacks; mid-epoch, so the chief validates nothing first). The chief's
next collective then fails (TensorFlow's coordination service sees the missing
heartbeats, or the short collective timeout expires) and it exits non-zero,
its last line one `kseq: error:` line naming the lost worker. Meanwhile this
process trains the same recipe on one device (eagerly, without the validation:
neither changes a weight).

Both are then restarted while worker 1's `--output` does not exist (no
shared file system): the chief would resume at step 2, worker 1 build a new
model, and both stop with one line before writing anything. Worker 1's
`--output` is then given a copy of the chief's folder (what a shared file
system shows), and both workers are started again with the same
commands, without the kill: both resume at the chief's step-2 checkpoint and
exit 0 after 8 steps. Only the chief writes: worker 1's `--output` was not
created by the killed launch and is left as it was by the restart, which
removes worker 1's private temporary folder (the killed launch's copy stays
in that launch's TMPDIR: a SIGKILL runs no clean-up); the validation score is
computed by the chief alone; the two workers end with the same weights, and
those equal the one-process run's within the tolerance of
`test_distributed_training.py` (Adam turns float noise into small steps).
"""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from fresh_process import ENV
from testing import functions_run_eagerly

# three launches of two children (each pays TensorFlow's start-up) and one in-process run
pytestmark = pytest.mark.slow

TIMEOUT_S = 15  # KSEQ_COLLECTIVE_TIMEOUT_S of the killed launch
KILL_AFTER_STEP = 3
SAVE_EVERY = 2  # the newest checkpoint at the kill: step 2
LOST_WORKER_LIMIT_S = TIMEOUT_S + 30  # the chief exits within this after worker 1 died
OVERRIDES = {"data": {"train_size": 64, "valid_size": 4, "test_size": 4},
             "training": {"boundaries": [32], "batch_size": 16}}

WORKER = r"""
import json, os, signal, sys
import keras
import numpy as np
from kseq.training import train
output, weights, overrides, kill_after, save_every = sys.argv[1:6]

class Killed(keras.callbacks.Callback):  # a worker that dies mid-epoch, without a word
    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) == int(kill_after):
            os.kill(os.getpid(), signal.SIGKILL)

model, _, validation = train("numbers_fr_tiny", output, epochs=2, verbose=0,
                             overrides=json.loads(overrides), strategy="multi-worker",
                             save_every_steps=int(save_every), extra_callbacks=[Killed()])
np.savez(weights, *model.get_weights())
print(json.dumps({"steps": int(model.optimizer.iterations.numpy()),
                  "replicas": model.distribute_strategy.num_replicas_in_sync,
                  "validated": len(validation)}))
"""


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for one in sockets:
        one.bind(("127.0.0.1", 0))
    ports = [one.getsockname()[1] for one in sockets]
    for one in sockets:
        one.close()
    return ports


def _chief_command(output):
    """`kseq train` with `OVERRIDES` as `--set` options."""
    sets = [f"{section}.{key}={json.dumps(value)}"
            for section, values in OVERRIDES.items() for key, value in values.items()]
    return [sys.executable, "-m", "kseq.cli", "train", "numbers_fr_tiny", "--output", output,
            "--epochs", "2", "--save-every", str(SAVE_EVERY), "--strategy", "multi-worker",
            *[option for one in sets for option in ("--set", one)]]


def _launch(root, workers, name, timeout_s, kill_after):
    """Starts the chief's command and worker 1's script; TMPDIR is a folder of this launch."""
    children = []
    for index in range(2):
        scratch = root / f"{name}{index}"  # TMPDIR: where a worker's private folder goes
        scratch.mkdir()
        env = {**ENV, "TMPDIR": str(scratch), "KSEQ_COLLECTIVE_TIMEOUT_S": str(timeout_s),
               "TF_CONFIG": json.dumps({"cluster": {"worker": workers},
                                        "task": {"type": "worker", "index": index}})}
        command = _chief_command(str(root / "out0")) if index == 0 else [
            sys.executable, "-c", WORKER, str(root / "out1"), str(root / "weights1.npz"),
            json.dumps(OVERRIDES), str(kill_after), str(SAVE_EVERY)]
        children.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True))
    return children


def _watch(child):
    """Reads `child`'s output in a thread; the result records when the child ended."""
    result = {}

    def wait():
        out, err = child.communicate()
        result.update(code=child.returncode, stdout=out, stderr=err, ended=time.monotonic())

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, result


def _finish(watched, deadline, what):
    """The watched child's result, or TimeoutError at `deadline` (a `time.monotonic()`)."""
    thread, result = watched
    thread.join(max(0.0, deadline - time.monotonic()))
    if thread.is_alive():
        raise TimeoutError(f"{what} did not exit in time")
    return result


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi_worker")
    workers = [f"127.0.0.1:{port}" for port in _free_ports(2)]
    children = []
    try:
        children = _launch(root, workers, "killed", TIMEOUT_S, KILL_AFTER_STEP)
        watched = [_watch(child) for child in children]

        from kseq.training import train  # the same global batches on one device, meanwhile

        # The same data split (valid_size kept); no BLEU (a search trace): no weight changes.
        # Run eagerly: 8 steps of a tiny model cost less than tracing the step.
        quiet = {**OVERRIDES, "training": {**OVERRIDES["training"], "bleu_subset": 0}}
        with functions_run_eagerly():
            reference, _, _ = train("numbers_fr_tiny", str(root / "one"), epochs=2, verbose=0,
                                    overrides=quiet, strategy="auto", save_every_steps=100)
        killed = _finish(watched[1], time.monotonic() + 300, "the killed worker")
        chief = _finish(watched[0], killed["ended"] + LOST_WORKER_LIMIT_S,
                        "the chief, after its peer died,")
        killed_launch = {"chief": chief, "worker": killed,
                         "chief_seconds": chief["ended"] - killed["ended"],
                         "checkpoints": sorted(os.listdir(root / "out0" / "backup")),
                         "other_output_created": (root / "out1").exists()}
        # Restarted while worker 1 sees no --output (no shared file system): the chief would
        # resume at step 2 and worker 1 start a new model. Both refuse, writing nothing.
        chief_files = _contents(root / "out0")
        children = _launch(root, workers, "unshared", 60, 0)
        deadline = time.monotonic() + 300
        unshared = [_finish(one, deadline, f"worker {index} without the chief's folder")
                    for index, one in enumerate([_watch(child) for child in children])]
        unshared_launch = {"workers": unshared, "chief_files_kept": _contents(root / "out0")
                           == chief_files, "other_output_created": (root / "out1").exists()}
        # Worker 1's --output now shows the chief's folder, as a shared file system would.
        shutil.copytree(root / "out0", root / "out1")
        before_restart = _contents(root / "out1")

        children = _launch(root, workers, "tmp", 60, 0)
        deadline = time.monotonic() + 300
        chief, other = [_finish(one, deadline, f"restarted worker {index}") for index, one
                        in enumerate([_watch(child) for child in children])]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()

    if chief["code"] == 0:  # else the tests show its stderr
        from kseq.training.run import load_trained

        model = load_trained(str(root / "out0"))
        chief.update(weights=model.get_weights(), steps=int(model.optimizer.iterations.numpy()))
    other["result"] = json.loads(_last_line(other["stdout"])) if other["code"] == 0 else None
    return {"root": root, "workers": workers, "killed": killed_launch, "unshared": unshared_launch,
            "restarted": [chief, other], "reference": reference,
            "other_output": (before_restart, _contents(root / "out1"))}


def _contents(folder):
    """{relative path: sha256} of every file under `folder`."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _weights(path):
    with np.load(path) as saved:
        return [saved[f"arr_{i}"] for i in range(len(saved.files))]


def _last_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def test_a_killed_worker_stops_the_chief_with_one_line(cluster_run):
    killed = cluster_run["killed"]
    assert killed["worker"]["code"] == -9, killed["worker"]["stderr"][-3000:]
    assert killed["chief"]["code"] == 2, killed["chief"]["stderr"][-3000:]
    assert killed["chief_seconds"] < LOST_WORKER_LIMIT_S
    line = _last_line(killed["chief"]["stderr"])
    assert line.startswith("kseq: error: A worker of the cluster (worker 1 at "
                           f"{cluster_run['workers'][1]}) was lost"), killed["chief"]["stderr"]
    assert "restart the same command on every worker" in line
    # The chief's step-2 checkpoint is the newest: the restart resumes there.
    assert killed["checkpoints"] == ["step-000000002.json", "step-000000002.weights.h5"]


def test_workers_that_would_resume_from_different_points_stop_with_one_line(cluster_run):
    unshared = cluster_run["unshared"]
    chief, other = unshared["workers"]
    # The chief runs the command (one line, exit 2), worker 1 the Python API (a KseqError).
    assert chief["code"] == 2 and "Traceback" not in chief["stderr"], chief["stderr"][-3000:]
    assert other["code"] == 1, other["stderr"][-3000:]
    for worker, prefix, mine, theirs in (
            (chief, "kseq: error: ", "the checkpoint at step 2", "a new model"),
            (other, "kseq.errors.KseqError: ", "a new model", "the checkpoint at step 2")):
        line = _last_line(worker["stderr"])
        assert line.startswith(prefix + "The workers would not resume from the same point "
                               f"(this worker: {mine}; another: {theirs})"), line
    assert unshared["chief_files_kept"] and not unshared["other_output_created"]


def test_both_workers_resume_at_the_chiefs_checkpoint_and_finish(cluster_run):
    chief, other = cluster_run["restarted"]
    assert chief["code"] == 0, chief["stderr"][-3000:]
    assert other["code"] == 0, other["stderr"][-3000:]
    for worker in (chief, other):
        assert "resuming at step 2 (epoch 1, batch 2; training to epoch 2)" in worker["stdout"]
    assert [chief["steps"], other["result"]["steps"]] == [8, 8]
    assert other["result"]["replicas"] == 2


def test_only_the_chief_writes_and_validates(cluster_run):
    root = cluster_run["root"]
    chief = sorted(os.listdir(root / "out0"))
    assert "model.keras" in chief and "history.csv" in chief and "backup" not in chief, chief
    # The other worker wrote only to its private folder: its own --output was not created
    # by the killed launch, and the restart (resuming from it) left it as it was ...
    assert not cluster_run["killed"]["other_output_created"]
    before, after = cluster_run["other_output"]
    assert "backup/step-000000002.json" in before and after == before
    assert os.listdir(root / "tmp1") == []  # ... and removed that folder when it finished
    rows = (root / "out0" / "history.csv").read_text().splitlines()
    assert len(rows) == 3 and "val_bleu" in rows[0]
    assert all(row.split(",")[rows[0].split(",").index("val_bleu")] for row in rows[1:])
    assert cluster_run["restarted"][1]["result"]["validated"] == 0


def test_weights_equal_a_one_process_run(cluster_run):
    root, reference = cluster_run["root"], cluster_run["reference"]
    chief, other = cluster_run["restarted"][0]["weights"], _weights(root / "weights1.npz")
    for a, b in zip(chief, other):
        np.testing.assert_allclose(a, b, atol=1e-6)
    distances = {w.path: float(np.max(np.abs(a - b)))
                 for w, a, b in zip(reference.weights, reference.get_weights(), chief)}
    # As in test_distributed_training.py: attention key biases get Adam steps from float noise.
    others = {name: d for name, d in distances.items() if not name.endswith("key/bias")}
    assert max(others.values()) < 5e-4, sorted(others.items(), key=lambda kv: kv[1])[-3:]
