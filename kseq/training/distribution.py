"""The `tf.distribute` strategy a run trains under, chosen by name and checked first.

`training.strategy` (or `kseq train --strategy`) names it:

- `auto` (default): `mirrored` over every visible GPU when there are two or
  more, else TensorFlow's default strategy (one device, exactly as without
  this option);
- `one-device`: `OneDeviceStrategy` on the first GPU, or the CPU;
- `mirrored`: `MirroredStrategy` over every GPU, or every logical CPU device
  when there is no GPU (tests split the CPU in two with
  `tf.config.set_logical_device_configuration`);
- `multi-worker`: `MultiWorkerMirroredStrategy` over the cluster `TF_CONFIG`
  describes, one process per worker, with a collective timeout so a worker
  that dies stops the others instead of hanging them.

The recipe's batch size or token budget is the **global** batch: Keras splits
each batch evenly over the replicas (the first ones get one row more when it
does not divide), and `kseq.metrics.MaskedSparseCrossEntropy` divides by the
global batch's real tokens, so the update equals one device's on the same
batch.

Example:
>>> from kseq.training.distribution import read_tf_config
>>> read_tf_config('{"cluster": {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]}, '
...                '"task": {"type": "worker", "index": 1}}')["task"]
{'type': 'worker', 'index': 1}
>>> read_tf_config('{"cluster": {}}')
Traceback (most recent call last):
...
kseq.errors.KseqError: TF_CONFIG must name the cluster's workers, e.g. {"cluster": {"worker": ["host1:2222", "host2:2222"]}, "task": {"type": "worker", "index": 0}}. Received: TF_CONFIG={"cluster": {}}
"""

import contextlib
import json
import os
import shutil
import tempfile

from kseq.arguments import seconds_from_environment
from kseq.errors import KseqError, one_line
from kseq.training.cluster_start import wait_for_peers

STRATEGIES = ("auto", "one-device", "mirrored", "multi-worker")
# Seconds a collective waits for a peer before failing the step (a dead worker);
# `KSEQ_COLLECTIVE_TIMEOUT_S` in the environment replaces it (tests use a few seconds).
COLLECTIVE_TIMEOUT_S = 120
_EXAMPLE = ('{"cluster": {"worker": ["host1:2222", "host2:2222"]}, '
            '"task": {"type": "worker", "index": 0}}')


def check_strategy(strategy, name="training.strategy"):
    """`strategy` if it is one of `STRATEGIES`, else a `KseqError` naming `name`."""
    if strategy not in STRATEGIES:
        raise KseqError(f"`{name}` must be one of {', '.join(STRATEGIES)}. "
                        f"Received: {name}={strategy!r}")
    return strategy


def _fail(problem, text):
    raise KseqError(f"TF_CONFIG {problem}. Received: TF_CONFIG={text}")


def read_tf_config(text):
    """The parsed `TF_CONFIG` (a JSON string) after checking its cluster and task."""
    if not text:
        _fail(f"is not set; `--strategy multi-worker` reads the cluster from it, e.g. "
              f"TF_CONFIG='{_EXAMPLE}'", repr(text))
    try:
        config = json.loads(text)
    except ValueError as error:
        _fail(f"is not valid JSON ({error})", text)
    cluster = config.get("cluster") if isinstance(config, dict) else None
    if not isinstance(cluster, dict) or not (cluster.get("worker") or cluster.get("chief")):
        _fail(f"must name the cluster's workers, e.g. {_EXAMPLE}", text)
    for role, addresses in cluster.items():
        if not isinstance(addresses, list) or not all(
                isinstance(a, str) and a.rpartition(":")[2].isdigit() for a in addresses):
            _fail(f"cluster.{role} must be a list of \"host:port\" strings", text)
    task = config.get("task")
    if not isinstance(task, dict) or task.get("type") not in cluster or isinstance(
            task.get("index"), bool) or not isinstance(task.get("index"), int) or not (
            0 <= task["index"] < len(cluster[task["type"]])):
        _fail(f"must say which task this process is: \"task\": {{\"type\": one of "
              f"{sorted(cluster)}, \"index\": its place in that list}}", text)
    return config


def is_chief_task(config):
    """Whether the `TF_CONFIG` task writes the run's files: the chief, or worker 0 when the
    cluster has no chief (TensorFlow's convention)."""
    task, cluster = config["task"], config["cluster"]
    return task["type"] == "chief" or (task["type"] == "worker" and task["index"] == 0
                                       and not cluster.get("chief"))


def check_multi_worker_environment(strategy):
    """Reads `TF_CONFIG` when `strategy` is multi-worker (None otherwise), before any op runs."""
    if strategy != "multi-worker":
        return None
    return read_tf_config(os.environ.get("TF_CONFIG", ""))


# One strategy object per name and process: two MirroredStrategy objects in one process
# number their collectives alike, and the second one's all-reduces then fail with "Shape
# mismatch in the collective instance" (seen on TF 2.21); a multi-worker strategy can be
# created only once per process anyway.
_MADE = {}


def make_strategy(strategy):
    """The `tf.distribute.Strategy` a checked strategy name stands for (made once a process)."""
    if strategy not in _MADE:
        _MADE[strategy] = _new_strategy(strategy)
    return _MADE[strategy]


def _new_strategy(strategy):
    import tensorflow as tf  # here: the CLI checks names without loading TensorFlow

    if strategy == "multi-worker":  # first: listing devices would start the runtime
        # TensorFlow's start has no bound: a taken port or a missing peer is named here first.
        wait_for_peers(read_tf_config(os.environ.get("TF_CONFIG", "")))
        options = tf.distribute.experimental.CommunicationOptions(
            timeout_seconds=collective_timeout_s())
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    gpus = tf.config.list_logical_devices("GPU")
    if strategy == "auto":
        return tf.distribute.MirroredStrategy() if len(gpus) >= 2 else tf.distribute.get_strategy()
    if strategy == "one-device":
        device = (gpus or tf.config.list_logical_devices("CPU"))[0]
        return tf.distribute.OneDeviceStrategy(device.name)
    if strategy == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
    return tf.distribute.MirroredStrategy([device.name for device in devices])


def shard_by_data(dataset):
    """`dataset` split by rows over the workers (`AutoShardPolicy.DATA`): an in-memory
    table has no files to split, and every worker must run the same number of steps."""
    import tensorflow as tf

    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options)


def collective_timeout_s():
    """`KSEQ_COLLECTIVE_TIMEOUT_S` when set (a positive number), else `COLLECTIVE_TIMEOUT_S`."""
    return seconds_from_environment("KSEQ_COLLECTIVE_TIMEOUT_S", COLLECTIVE_TIMEOUT_S)


@contextlib.contextmanager
def task_output_folder(output_dir, tf_config):
    """The folder this process trains into: `output_dir` for the chief (and any run that is
    not multi-worker), else a private copy of it that is removed afterwards.

    Every worker runs the same steps and builds the same variables (their
    creation is a collective), so the other workers do all the chief does,
    but into a temporary folder: only the chief's `output_dir` receives
    `model.keras`, `history.csv`, curves and checkpoints. The copy starts
    from what `output_dir` holds, so a restarted worker resumes at the
    chief's last checkpoint (on several machines, `output_dir` must then be
    a shared file system).
    """
    if tf_config is None or is_chief_task(tf_config):
        yield output_dir
        return
    private = tempfile.mkdtemp(prefix=f"kseq-{tf_config['task']['type']}"
                                      f"{tf_config['task']['index']}-")
    try:
        if os.path.isdir(output_dir):
            _copy_readable(output_dir, private)
        yield private
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _copy_readable(source, target):
    """Copies `source` into `target`, skipping files that vanish meanwhile (the chief
    replaces files while a worker starts) and temporary ones."""
    from kseq.atomic_files import TEMPORARY_PREFIX

    for folder, names, files in os.walk(source):
        names[:] = [name for name in names if not name.startswith(TEMPORARY_PREFIX)]
        into = os.path.join(target, os.path.relpath(folder, source))
        os.makedirs(into, exist_ok=True)
        for name in files:
            if not name.startswith(TEMPORARY_PREFIX):
                with contextlib.suppress(FileNotFoundError):
                    shutil.copy2(os.path.join(folder, name), os.path.join(into, name))


@contextlib.contextmanager
def lost_worker_as_error(strategy):
    """Under `multi-worker`, a collective that failed (a worker died, or timed out) becomes
    one `KseqError` line instead of TensorFlow's multi-page trace."""
    if strategy != "multi-worker":
        yield
        return
    import tensorflow as tf

    try:
        yield
    except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
            tf.errors.CancelledError, tf.errors.AbortedError, tf.errors.InternalError) as error:
        raise KseqError(f"A worker of the cluster ({_peers()}) was lost (its heartbeats "
                        f"stopped, or a collective waited {collective_timeout_s():g} s for it), "
                        f"so training stopped; restart the "
                        f"same command on every worker to resume from the chief's last "
                        f"checkpoint. Received: {one_line(error, 300)}") from None


def check_same_start(distribution, start):
    """Every worker of a `multi-worker` run must resume from the same point: else each
    stops with one `KseqError` line before it builds or writes anything.

    A worker restarted without the chief's folder (an empty `--output`, no shared
    file system) would build a new model while the chief loads its checkpoint: their
    variable broadcasts and steps would not match, and TensorFlow would fail deep
    inside a collective. `start` is this worker's point: a checkpoint's step,
    `CONTINUED` (a finished `model.keras`), `NEW` or `UNUSABLE`; one all-gather over
    `distribution` (the run's `MultiWorkerMirroredStrategy`) compares them.
    """
    import tensorflow as tf

    mine = tf.constant([start], tf.float64)  # exact for any step count

    def every_start():  # one per replica (ReduceOp has no MAX or MIN: gather them all)
        return tf.distribute.get_replica_context().all_gather(mine, axis=0)

    gathered = distribution.run(tf.function(every_start))
    starts = distribution.experimental_local_results(gathered)[0].numpy().astype(int)
    highest, lowest = int(starts.max()), int(starts.min())
    if highest != lowest:
        other = highest if start != highest else lowest
        raise KseqError(f"The workers would not resume from the same point (this worker: "
                        f"{_start_name(start)}; another: {_start_name(other)}): every worker "
                        f"must see the chief's --output folder (a shared file system, or a "
                        f"copy of it) before the same command is restarted on each. "
                        f"Received: {os.environ.get('TF_CONFIG', '')}")


# `check_same_start`'s points that are not a checkpoint's step.
UNUSABLE, NEW, CONTINUED = -3, -2, -1


def _start_name(start):
    return {NEW: "a new model", CONTINUED: "continuing the finished model.keras",
            UNUSABLE: "no usable checkpoint"}.get(start, f"the checkpoint at step {start}")


def _peers():
    """The other tasks of `TF_CONFIG`, as `worker 1 at host:port` (one of them was lost)."""
    try:
        config = read_tf_config(os.environ.get("TF_CONFIG", ""))
    except KseqError:
        return "TF_CONFIG unreadable"
    me = (config["task"]["type"], config["task"]["index"])
    return ", ".join(f"{role} {index} at {address}"
                     for role, addresses in sorted(config["cluster"].items())
                     for index, address in enumerate(addresses) if (role, index) != me)
