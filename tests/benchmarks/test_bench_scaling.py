"""`benchmarks/bench_scaling.py --smoke`: every curve, every figure, the linearity and the PNG.

Its `main()` in this process (as `test_harness.py` runs the others: a child would
only add a TensorFlow start and teardown): the tiny numbers preset decoding at two
batch and two beam sizes, three one-layer training points (two widths, two lengths,
one shared), a 512² matmul. Only that each figure is there, positive and finite, and
that the figures agree with each other: no timing asserts (the machines are shared).
"""

import contextlib
import io
import json
import math
import os
import sys

import pytest

pytestmark = pytest.mark.slow  # ~30 s at load 5-7 on 2 cores: 5 traces

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import bench_scaling  # noqa: E402
READINGS = {"sublinear", "linear", "superlinear"}


def positive(value):
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def check_decoding(curve, size_key):
    sizes = [point[size_key] for point in curve]
    assert len(sizes) >= 2 and sizes == sorted(set(sizes))
    for point in curve:
        for key in ("sentences_per_second", "ms_per_sentence", "seconds_per_call"):
            assert positive(point[key]), (size_key, point)
        # Two roundings of one measured time: they agree to their last digits.
        assert abs(point["sentences_per_second"] * point["ms_per_sentence"] / 1000 - 1) < 0.01
        assert point["output_words_per_sentence"] >= 0


def check_training(curve, size_key, matmul_gflops):
    sizes = [point[size_key] for point in curve]
    assert len(sizes) >= 2 and sizes == sorted(set(sizes))
    for point in curve:
        for key in ("seconds_per_step", "target_tokens_per_second", "achieved_gflops",
                    "fraction_of_matmul", "parameters", "last_loss"):
            assert positive(point[key]), (size_key, point)
        assert positive(point["flops"]["per_step"]) and 0 < point["flops"]["attention_share"] < 1
        assert point["heads"] == max(1, point["width"] // 64)  # head dimension 64
        # The fraction is the achieved FLOP/s over the larger in-run matmul figure.
        assert point["fraction_of_matmul"] == pytest.approx(
            point["achieved_gflops"] / matmul_gflops, rel=0.05)


def check_linearity(reading, points, size_key):
    assert len(reading["steps"]) == len(points) - 1
    for step, before, after in zip(reading["steps"], points, points[1:]):
        assert positive(step["cost_growth"]) and positive(step["work_growth"])
        assert step["cost_over_work"] == pytest.approx(
            step["cost_growth"] / step["work_growth"], rel=0.01)
        assert step["reading"] in READINGS
        assert (step["from"], step["to"]) == (before[size_key], after[size_key])
    assert reading["linear_from"] in [None] + [step["from"] for step in reading["steps"]]
    assert reading["summary"]


def test_smoke_run_reports_every_curve_and_draws_the_png(tmp_path):
    output, picture = tmp_path / "scaling.json", tmp_path / "scaling.png"
    with contextlib.redirect_stdout(io.StringIO()):  # the printed JSON: the file is read
        returned = bench_scaling.main(["--smoke", "--json", str(output), "--png", str(picture)])
    result = json.loads(output.read_text())
    assert returned["png"] == result["png"]  # what main() returns is what it wrote
    assert result["smoke"] is True and result["machine"]["cpus"] == os.cpu_count()
    assert "synthetic" in result["training_model"]["data"]
    matmul = result["matmul_gflops"]
    assert positive(matmul["before_training"]) and positive(matmul["after_training"])
    limit = max(matmul["before_training"], matmul["after_training"])
    decoding, training = result["decoding"], result["training"]
    check_decoding(decoding["batch"], "batch")
    check_decoding(decoding["beam"], "beam")
    assert {point["beam"] for point in decoding["batch"]} == {1}  # the batch curve is greedy
    assert len({point["batch"] for point in decoding["beam"]}) == 1
    check_training(training["width"], "width", limit)
    check_training(training["length"], "length", limit)
    # Fixed tokens per step: the rows shrink as the length grows.
    assert len({p["rows"] * p["length"] for p in training["length"]}) == 1
    curves = {"decoding_batch": (decoding["batch"], "batch"),
              "decoding_beam": (decoding["beam"], "beam"),
              "training_width": (training["width"], "width"),
              "training_length": (training["length"], "length")}
    assert set(result["linearity"]) == set(curves)
    for name, (points, size_key) in curves.items():
        check_linearity(result["linearity"][name], points, size_key)
    assert result["png"] == str(picture)
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
