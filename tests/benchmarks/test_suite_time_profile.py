"""`experiments/suite_time_profile.py`: each sampled stack gets its kind of work."""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "experiments"))
import suite_time_profile  # noqa: E402

PYTEST = 'process 1:"python -m pytest -n 2 tests"'
WORKER = 'process 2:"python -u -c import sys;exec(eval(sys.stdin.readline()))"'
CHILD = 'process 3:"python -m kseq.cli train numbers_fr_tiny"'
TEST = "test_fit (test_zoo.py:12)"
STACKS = {
    f"{PYTEST};{WORKER};{TEST};func_graph_from_py_func (func_graph.py:9);"
    "quick_execute (execute.py:5)": ("tracing", 50),  # a call inside a trace: tracing
    f"{PYTEST};{WORKER};{TEST};quick_execute (tensorflow/python/eager/execute.py:5)":
        ("running", 25),
    f"{PYTEST};{WORKER};{TEST};mat_mul (tensorflow/python/ops/gen_math_ops.py:6236)":
        ("running", 5),
    f"{PYTEST};{WORKER};{TEST};reduce_dataset (tensorflow/python/ops/gen_dataset_ops.py:9)":
        ("tf_data_ops", 10),
    f"{PYTEST};{WORKER};helper (x.py:3)": ("other", 5),
    f"{PYTEST};{WORKER};{CHILD};_find_and_load (<frozen importlib._bootstrap>:1)":
        ("child_imports", 25),
    # A `python -c` child: its command line keeps the script's newlines, and a script line
    # ending in a number is no record of its own.
    f'{PYTEST};{WORKER};process 4:"python -c import json\nhalf = 2\nprint(half)";'
    '<module> (<string>:1);func_graph_from_py_func (func_graph.py:9)': ("child_tracing", 5),
    f"{PYTEST};main (pytest.py:1)": ("controller", 0),
}


def test_each_stack_gets_its_kind_and_the_totals_add_up(tmp_path):
    assert {stack: suite_time_profile.kind(stack) for stack in STACKS} == {
        stack: kind for stack, (kind, _) in STACKS.items()}
    raw = tmp_path / "suite.txt"
    raw.write_text("".join(f"{stack} {count}\n" for stack, (_, count) in STACKS.items()
                           if count))
    result = suite_time_profile.profile(str(raw))
    assert result["sampled_seconds"] == 5.0  # 125 samples at 25 a second
    assert result["by_kind"]["tracing"] == {"seconds": 2.0, "share": 0.4}
    assert result["by_kind"]["running"]["seconds"] == 1.2
    assert result["top_tests_seconds"] == {"test_zoo.py::test_fit": 3.6}
    json.dumps(result)
