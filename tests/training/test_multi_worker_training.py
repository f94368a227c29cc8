"""`kseq.training.train(..., strategy="multi-worker")`: two real worker processes on 127.0.0.1.

Two children get a `TF_CONFIG` naming two free local ports and train the tiny
numbers recipe (global batch 16: 8 rows per worker) while this process trains
the same recipe on one device. Both workers exit 0; only the chief's
`--output` holds `model.keras` (the other worker was given its own folder,
which is never created, and its private temporary folder is gone); the
validation score is computed by the chief alone; the two workers end with the
same weights, and those equal the one-process run's within the tolerance of
`test_distributed_training.py` (Adam turns float noise into small steps).
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from fresh_process import ENV

pytestmark = pytest.mark.slow  # two children and one in-process run: ~30 s on a quiet 2-core CPU

OVERRIDES = {"data": {"train_size": 64, "valid_size": 4, "test_size": 4},
             "training": {"boundaries": [32], "batch_size": 16}}

WORKER = r"""
import json, sys
import numpy as np
from kseq.training import train
output, weights, overrides = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
model, _, validation = train("numbers_fr_tiny", output, epochs=2, verbose=0,
                             overrides=overrides, strategy="multi-worker", save_every_steps=3)
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


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi_worker")
    workers = [f"127.0.0.1:{port}" for port in _free_ports(2)]
    children = []
    for index in range(2):
        scratch = root / f"tmp{index}"  # TMPDIR: where a worker's private folder goes
        scratch.mkdir()
        env = {**ENV, "TMPDIR": str(scratch), "KSEQ_COLLECTIVE_TIMEOUT_S": "60",
               "TF_CONFIG": json.dumps({"cluster": {"worker": workers},
                                        "task": {"type": "worker", "index": index}})}
        children.append(subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root / f"out{index}"),
             str(root / f"weights{index}.npz"), json.dumps(OVERRIDES)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    from kseq.training import train  # the same global batches on one device, meanwhile

    reference, _, _ = train("numbers_fr_tiny", str(root / "one"), epochs=2, verbose=0,
                            overrides=OVERRIDES, strategy="auto", save_every_steps=3)
    finished = []
    for child in children:
        try:
            out, err = child.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            for other in children:
                other.kill()
            raise
        finished.append({"code": child.returncode, "stderr": err,
                         "result": json.loads(out.strip().splitlines()[-1]) if out.strip()
                         else None})
    return {"root": root, "workers": finished, "reference": reference}


def _weights(path):
    with np.load(path) as saved:
        return [saved[f"arr_{i}"] for i in range(len(saved.files))]


def test_both_workers_exit_zero_after_the_same_steps(cluster_run):
    for worker in cluster_run["workers"]:
        assert worker["code"] == 0, worker["stderr"][-3000:]
    assert [w["result"]["steps"] for w in cluster_run["workers"]] == [8, 8]
    assert [w["result"]["replicas"] for w in cluster_run["workers"]] == [2, 2]


def test_only_the_chief_writes_and_validates(cluster_run):
    root = cluster_run["root"]
    chief = sorted(os.listdir(root / "out0"))
    assert "model.keras" in chief and "history.csv" in chief and "backup" not in chief, chief
    assert not (root / "out1").exists()  # the other worker wrote only to its private folder
    assert os.listdir(root / "tmp1") == []  # ... which it removed
    rows = (root / "out0" / "history.csv").read_text().splitlines()
    assert len(rows) == 3 and "val_bleu" in rows[0]
    assert [w["result"]["validated"] for w in cluster_run["workers"]] == [2, 0]


def test_weights_equal_a_one_process_run(cluster_run):
    root, reference = cluster_run["root"], cluster_run["reference"]
    chief, other = _weights(root / "weights0.npz"), _weights(root / "weights1.npz")
    for a, b in zip(chief, other):
        np.testing.assert_allclose(a, b, atol=1e-6)
    distances = {w.path: float(np.max(np.abs(a - b)))
                 for w, a, b in zip(reference.weights, reference.get_weights(), chief)}
    # As in test_distributed_training.py: attention key biases get Adam steps from float noise.
    others = {name: d for name, d in distances.items() if not name.endswith("key/bias")}
    assert max(others.values()) < 5e-4, sorted(others.items(), key=lambda kv: kv[1])[-3:]
