"""The translator benchmarks' smoke runs: each still runs and reports every number.

No timing asserts (the machines are shared and noisy). Moved here from
`tests/test_examples_and_demo.py` (two child processes of about a minute each): with
`--dist loadfile` a file runs on one worker, and two shorter files balance better.
"""

import json
import os
import subprocess
import sys

import pytest

from testing import warnings_as_errors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _no_warnings():
    """As the examples' tests: no warning (but named third-party deprecations; `testing`)."""
    with warnings_as_errors():
        yield


@pytest.mark.slow
def test_bench_translator_runs_tiny(tmp_path):
    """Only that the benchmark still runs and reports every ratio: no timing asserts.

    The smoke run: kseq's side in the benchmark's own process, the peer's in a child,
    one timed repeat per search, a 512² matmul (`bench_translator.SMOKE`).
    """
    output = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks/bench_translator.py"),
                           "--smoke", "--json", str(output)], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(output.read_text())
    assert result["smoke"] is True  # the harness's smoke mode: the tiny size
    ratios = result["ratios_kseq_over_peer"]
    assert set(ratios) >= {"train_same_padding_tokens_per_second", "decode_beam4_forced",
                           "decode_greedy_natural", "peak_rss"}
    assert all(value and value > 0 for value in ratios.values())
    # Same dimensions on both sides: parameter counts agree to a few position rows and biases.
    assert abs(result["kseq"]["parameters"] / result["peer"]["parameters"] - 1) < 0.05
    efficiency = result["efficiency"]
    assert 0 < efficiency["natural_fraction_of_matmul"]
    assert 0 < efficiency["same_padding_fraction_of_matmul"]
    assert result["kseq"]["train_natural_xla"]["shapes"] >= 1
    # The summary of three runs: each ratio's median is its value when the runs agree.
    summary = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks/bench_translator_summary.py")]
        + [str(output)] * 3, capture_output=True, text=True, timeout=60, check=True).stdout
    same = ratios["train_same_padding_tokens_per_second"]
    assert f"| train_same_padding_tokens_per_second | {same:g} | {same:g} | {same:g} | {same:g} |" \
        in summary


@pytest.mark.slow
def test_bench_real_rows_train_step_runs_tiny(tmp_path):
    """Only that the benchmark still runs and reports both settings: no timing asserts."""
    output = tmp_path / "bench.json"
    done = subprocess.run([sys.executable,
                           os.path.join(ROOT, "benchmarks/bench_real_rows_train_step.py"),
                           "--tiny", "--steps", "3", "--json", str(output)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(output.read_text())
    assert set(result) == {"same_padding_24", "bucket_16", "machine"}  # machine: the harness's
    assert result["machine"]["cpu_flags"] == sorted(result["machine"]["cpu_flags"])
    for setting in (result["same_padding_24"], result["bucket_16"]):
        assert 0 < setting["real_label_share"] < 1
        assert set(setting["seconds_per_step"]) == {"kseq_real_rows", "keras_all_rows"}
        assert setting["ratio_keras_over_kseq"] > 0
