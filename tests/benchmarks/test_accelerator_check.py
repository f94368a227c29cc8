"""`benchmarks/accelerator_check.sh --cpu --tiny`: the accelerator check's smoke run.

It trains the tiny recipe a few steps in float32 and mixed_bfloat16 through
`kseq.training.train(strategy="auto")`, decodes greedy and beam 4, exports (greedy)
and serves the export in a fresh process; every step prints one JSON line and the
script exits 0.
"""

import json
import os
import subprocess

import pytest

from fresh_process import ENV

pytestmark = pytest.mark.slow  # ~48 s on a shared 2-core CPU (two TensorFlow processes)

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "accelerator_check.sh")


def test_cpu_tiny_smoke_run_trains_decodes_and_exports(tmp_path):
    done = subprocess.run(["bash", SCRIPT, "--cpu", "--tiny", "--work", str(tmp_path)],
                          env=ENV, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-2000:]
    checks = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            checks[record["check"]] = record
    assert {"devices", "train", "decode", "export", "summary", "done"} <= set(checks)
    assert "install" not in checks  # --cpu uses the current interpreter
    summary = checks["summary"]
    assert summary["ok"] and summary["gpus"] == 0
    assert [run["precision"] for run in summary["train"]] == ["float32", "mixed_bfloat16"]
    for run in summary["train"]:
        assert run["steps"] == 6 and run["real_tokens_per_second"] > 0
        assert run["peak_memory_mb"] > 0
    assert set(summary["decode"]) == {"beam_1", "beam_4"}
