"""A multi-worker start that cannot happen ends with one line, within `KSEQ_PEER_TIMEOUT_S`.

`kseq train --strategy multi-worker` as a lone worker 0 whose worker 1 never starts, and as a worker 1 whose port this test holds (as
another program, or a second process given the same task, would). Before (issue 50,
item 7), the first waited without a word for 7+ minutes and the second ended in a
`Could not start gRPC server` traceback. Now the lone worker says whom it waits for and
stops after the timeout, the other stops at once: each exits 2 with one line naming the
address, before TensorFlow starts a server or anything is written. The lone worker runs
as a child process (TensorFlow's wait held the GIL: in-process, a hang would hang the test
run), the other in-process.
"""

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from fresh_process import ENV
from kseq.cli import main
from testing import free_ports

PEER_TIMEOUT_S = 0.5
LIMIT_S = 60  # a command still running then hangs (the old behaviour)


def _config(workers, index):
    return json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})


def _command(output):
    return ["train", "numbers_fr_tiny", "--output", str(output), "--strategy", "multi-worker"]


@pytest.mark.slow  # a child process: TensorFlow's start-up
def test_a_lone_worker_waits_a_bounded_time_and_says_for_whom(tmp_path):
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    env = {**ENV, "KSEQ_PEER_TIMEOUT_S": str(PEER_TIMEOUT_S), "TF_CONFIG": _config(workers, 0)}
    child = subprocess.Popen([sys.executable, "-m", "kseq.cli", *_command(tmp_path / "out")],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=LIMIT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 2, err
    assert out.splitlines() == [f"waiting up to {PEER_TIMEOUT_S} s (KSEQ_PEER_TIMEOUT_S) for "
                                f"worker 1 at {workers[1]} to start"]
    assert err.splitlines() == [
        f"kseq: error: worker 1 at {workers[1]} did not start within {PEER_TIMEOUT_S} s "
        f"(KSEQ_PEER_TIMEOUT_S): start the same command on every task of TF_CONFIG, each with "
        f"its own task. Received: worker 0 at {workers[0]} started alone"]
    assert not (tmp_path / "out").exists()


def test_a_taken_port_is_one_line_naming_the_address(tmp_path, capsys, monkeypatch):
    outcome = []
    with socket.socket() as taken:  # held by "another program" while the worker starts
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        workers = [f"127.0.0.1:{free_ports(1)[0]}", f"127.0.0.1:{taken.getsockname()[1]}"]
        monkeypatch.setenv("TF_CONFIG", _config(workers, 1))
        started = time.monotonic()
        # In a thread: a start that waits for its peers (TensorFlow's) fails the test.
        command = threading.Thread(target=lambda: outcome.append(main(_command(
            tmp_path / "out"))), daemon=True)
        command.start()
        command.join(LIMIT_S)
    captured = capsys.readouterr()
    assert outcome == [2] and time.monotonic() - started < LIMIT_S, captured.err
    (line,) = captured.err.splitlines()
    assert line.startswith(f"kseq: error: Cannot listen on {workers[1]}, the address of worker "
                           f"1 in TF_CONFIG (Address already in use): another program holds "
                           f"the port, or another process was started as the same task"), line
    assert captured.out == "" and not (tmp_path / "out").exists()
