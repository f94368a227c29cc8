"""A multi-worker run's start: this task's port checked, then a bounded wait for its peers.

TensorFlow's own start has neither. A task whose port is taken (by another
program, or by a second process given the same task) ends in a `Could not start
gRPC server` traceback; a task whose peers never come waits without a word, as
the coordination service connects every task inside `MultiWorkerMirroredStrategy()`
and the public API sets no timeout for that. So before TensorFlow starts its
server, `wait_for_peers` holds the task's own address with a plain listening
socket (a port in use is then one line naming the address) and waits, for at
most `KSEQ_PEER_TIMEOUT_S` seconds (default `PEER_TIMEOUT_S`), until every other
task of `TF_CONFIG` accepts a connection on its address: its socket of this same
wait, or its TensorFlow server once it got past it. Then it lets go of the port,
which TensorFlow binds next.

Example:
>>> import os, socket
>>> from kseq.training.cluster_start import wait_for_peers
>>> ports = []
>>> for _ in range(2):
...     with socket.socket() as probe:
...         probe.bind(("127.0.0.1", 0))
...         ports.append(probe.getsockname()[1])
>>> config = {"cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
...           "task": {"type": "worker", "index": 0}}
>>> os.environ["KSEQ_PEER_TIMEOUT_S"] = "0.2"
>>> wait_for_peers(config, report=lambda line: None)  # worker 1 never starts
Traceback (most recent call last):
...
kseq.errors.KseqError: worker 1 at 127.0.0.1:... did not start within 0.2 s ...
>>> del os.environ["KSEQ_PEER_TIMEOUT_S"]
"""

import contextlib
import socket
import time

from kseq.arguments import seconds_from_environment
from kseq.errors import KseqError

# Seconds a task waits for the others to start (workers started by hand on several machines
# need minutes); `KSEQ_PEER_TIMEOUT_S` in the environment replaces it.
PEER_TIMEOUT_S = 300
_POLL_S = 0.25


def peer_timeout_s():
    """`KSEQ_PEER_TIMEOUT_S` when set (a positive number), else `PEER_TIMEOUT_S`."""
    return seconds_from_environment("KSEQ_PEER_TIMEOUT_S", PEER_TIMEOUT_S)


def wait_for_peers(config, report=print):
    """Returns once every other task of `config` (a checked `TF_CONFIG`) listens on its
    address; `KseqError` when this task's port is taken or a peer is still missing after
    `peer_timeout_s()`. `report` gets one line naming the missing tasks when it waits."""
    tasks = {(role, index): address for role, addresses in config["cluster"].items()
             for index, address in enumerate(addresses)}
    me = (config["task"]["type"], config["task"]["index"])
    timeout = peer_timeout_s()
    with _listening(tasks[me], me):
        missing = {task: address for task, address in tasks.items() if task != me}
        deadline = time.monotonic() + timeout
        while True:
            missing = {task: address for task, address in missing.items()
                       if not _accepts(address)}
            if not missing:
                return
            if time.monotonic() >= deadline:
                raise KseqError(f"{_names(missing)} did not start within {timeout:g} s "
                                f"(KSEQ_PEER_TIMEOUT_S): start the same command on every task "
                                f"of TF_CONFIG, each with its own task. Received: "
                                f"{_names({me: tasks[me]})} started alone")
            if report is not None:
                report(f"waiting up to {timeout:g} s (KSEQ_PEER_TIMEOUT_S) for "
                       f"{_names(missing)} to start")
                report = None  # once
            time.sleep(_POLL_S)


@contextlib.contextmanager
def _listening(address, task):
    """This task's port held by a listening socket (on every interface, as TensorFlow binds
    it) for the block; a port that cannot be bound is one `KseqError` naming it."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As gRPC does: a previous run's connections in TIME_WAIT do not hold the port, a
    # listening socket (another program, or a process given the same task) does.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("", _port(address)))
        listener.listen(16)
    except OSError as error:
        listener.close()
        raise KseqError(f"Cannot listen on {address}, the address of {task[0]} {task[1]} in "
                        f"TF_CONFIG ({error.strerror}): another program holds the port, or "
                        f"another process was started as the same task. Received: "
                        f"{address}") from None
    try:
        yield
    finally:
        listener.close()  # TensorFlow binds the port next


def _accepts(address):
    """Whether `address` (`host:port`) accepts a TCP connection now."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0):
            return True
    except OSError:
        return False


def _port(address):
    return int(address.rpartition(":")[2])


def _names(tasks):
    """`{(role, index): address}` -> "worker 1 at host:port, chief 0 at ..."."""
    return ", ".join(f"{role} {index} at {address}"
                     for (role, index), address in sorted(tasks.items()))
