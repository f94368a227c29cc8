"""The translator benchmarks' smoke runs: each still runs and reports every number.

No timing asserts (the machines are shared and noisy). Moved here from
`tests/test_examples_and_demo.py`: with `--dist loadfile` a file runs on one worker,
and two shorter files balance better. Each benchmark's `main()` runs in this process
(as `test_harness.py` runs the others): a child would only add a TensorFlow start
(~6.5 s) and its teardown, and nothing here is about a fresh process.
"""

import contextlib
import io
import json
import logging
import os
import re
import sys

import pytest

from testing import ALLOWED_WARNINGS, warnings_as_errors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import bench_real_rows_train_step  # noqa: E402
import bench_translator  # noqa: E402
import bench_translator_summary  # noqa: E402


# The peer's own: keras-hub's `TokenAndPositionEmbedding` hands its mask to layers that
# drop it (Keras warns once per layer). The peer's model is built as keras.io builds it.
PEER_MASK_WARNING = (UserWarning, r"Layer '.*' \(of type .*\) was passed an input with a mask",
                     r"keras\.")


# Log lines the benchmarks cause on purpose: they train several models and shapes a few
# steps each with `train_on_batch` (TensorFlow's retracing warning), and the peer is
# keras-hub's (its mask / padding_mask notice; AutoGraph leaves its sampler closure as is).
BENCHMARK_LOG_LINES = (
    r"calls to <function TensorFlowTrainer\._make_function\.<locals>\.one_step_on_data",
    r"You are explicitly setting `padding_mask` while the `inputs` have built-in mask",
    r"AutoGraph could not transform <function peer_decoding\.<locals>\.run",
)


class _BenchmarkLogLines(logging.Filter):
    def filter(self, record):
        return not any(re.search(line, record.getMessage()) for line in BENCHMARK_LOG_LINES)


@pytest.fixture(autouse=True)
def _no_warnings():
    """As the examples' tests: no warning (but named third-party deprecations; `testing`),
    now that the benchmarks run in this process: kseq's side warns nothing either (a
    child's warnings went unchecked), but the lines above."""
    known = _BenchmarkLogLines()
    loggers = [logging.getLogger(name) for name in ("tensorflow", "absl")]
    for logger in loggers:
        logger.addFilter(known)
    try:
        with warnings_as_errors(ALLOWED_WARNINGS + (PEER_MASK_WARNING,)):
            yield
    finally:
        for logger in loggers:
            logger.removeFilter(known)


@pytest.mark.slow
def test_bench_translator_runs_tiny(tmp_path):
    """Only that the benchmark still runs and reports every ratio: no timing asserts.

    The smoke run: both sides in one process (kseq's first), two searches of four on
    each side (greedy natural, beam 4 forced: both searches, both stopping modes), one
    timed repeat each, a 512² matmul (`bench_translator.SMOKE`).
    """
    output = tmp_path / "bench.json"
    with contextlib.redirect_stdout(io.StringIO()):  # the printed JSON: the file is read
        assert bench_translator.main(["--smoke", "--json", str(output)]) == 0
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
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert bench_translator_summary.main([str(output)] * 3)
    summary = printed.getvalue()
    same = ratios["train_same_padding_tokens_per_second"]
    assert f"| train_same_padding_tokens_per_second | {same:g} | {same:g} | {same:g} | {same:g} |" \
        in summary


@pytest.mark.slow
def test_bench_real_rows_train_step_runs_tiny(tmp_path):
    """Only that the benchmark still runs and reports both settings: no timing asserts."""
    output = tmp_path / "bench.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert bench_real_rows_train_step.main(["--tiny", "--steps", "3", "--json",
                                                str(output)]) == 0
    result = json.loads(output.read_text())
    assert set(result) == {"same_padding_24", "bucket_16", "machine"}  # machine: the harness's
    assert result["machine"]["cpu_flags"] == sorted(result["machine"]["cpu_flags"])
    for setting in (result["same_padding_24"], result["bucket_16"]):
        assert 0 < setting["real_label_share"] < 1
        assert set(setting["seconds_per_step"]) == {"kseq_real_rows", "keras_all_rows"}
        assert setting["ratio_keras_over_kseq"] > 0
