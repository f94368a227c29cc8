"""Where does `make test`'s CPU time go? Sampled stacks of the whole suite, by kind of work.

    pip install py-spy   # a sampling profiler; not one of kseq's dependencies
    python benchmarks/experiments/suite_time_profile.py --record /tmp/suite.txt \
        --json benchmarks/experiments/results/suite_time_profile.json
    python benchmarks/experiments/suite_time_profile.py --raw /tmp/suite.txt   # again, no run

The question (issue #29: `make test` within 15 minutes on an AVX2-only 2-core CPU): is
the suite's time in running tiny models, or in the work around them, and which parts
would a faster CPU (wider vectors, more FLOP/s) shorten? `--record` runs `make test`'s
pytest command under `py-spy record --subprocesses` (Python stacks of the two xdist
workers and of every child process a test starts, 25 samples a second) and keeps the raw
stacks; `--raw` reads such a file. Each sample gets one kind, the first that matches from
the top of this list: tracing (`func_graph_from_py_func`: Python
building a graph), writing a SavedModel, loading a `.keras` file, creating a `tf.data`
iterator, other eager `tf.data` work (a `reduce` or `get_single_element` pass over a
dataset), running compiled functions and eager ops (`quick_execute`, or a generated op
wrapper on top of the stack: kernels, and instantiating functions), imports, and the rest;
the same kinds with a `child_` prefix for the child processes tests start.
Also the tests (first `test_*` frame) that took most samples. Prints JSON.

Samples are of Python threads only: TensorFlow's own kernel threads are not seen, so
"running" is the time a Python thread waited on kernels (tiny models: mostly dispatch).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
import harness  # noqa: E402

RATE = 25  # samples a second
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
          "--dist", "loadfile", "--doctest-modules", "kseq", "tests"]
WORKER = "exec(eval(sys.stdin.readline()))"  # how an xdist worker's command line ends
# A sample -> its kind: the first pattern found in the stack.
KINDS = [
    ("tracing", "func_graph_from_py_func"),
    ("savedmodel_writing", "saved_model/save.py"),
    ("keras_file_loading", "saving_lib.py"),
    ("tf_data_iterators", "make_iterator"),
    ("tf_data_passes", "gen_dataset_ops.py"),  # eager reduce / get_single_element: a pass
    ("running", "quick_execute"),
    ("imports", "_find_and_load"),
]
TEST_FRAME = re.compile(r"(test_\w+) \(((?:test_\w+|\w+_fixtures|conftest)\.py):\d+\)")


def samples(path):
    """`(stack, count)` of a py-spy raw file (`frame;frame;... count` lines)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            match = re.match(r"^(.*) (\d+)$", line.rstrip("\n"))
            if match:
                yield match.group(1), int(match.group(2))


def kind(stack):
    """The kind of work of one sampled stack (see the module docstring); a child process's
    kinds start with `child_`."""
    processes = [m.start() for m in re.finditer(r'process \d+:"', stack)]
    own = stack[processes[-1]:] if processes else stack
    if len(processes) == 1 and WORKER not in own[:300]:
        return "controller"  # pytest's own process
    # Children name their own process; one whose command line holds quotes shows none.
    prefix = "" if processes and WORKER in own[:300] else "child_"
    found = next((name for name, pattern in KINDS if pattern in own), None)
    # A generated op wrapper (`gen_*_ops.py`) on top of the stack: an eager op running.
    if found is None:
        found = "running" if re.search(r"/gen_\w+_ops\.py:\d+\)$", own) else "other"
    return prefix + found


def profile(path):
    kinds, tests, total = collections.Counter(), collections.Counter(), 0
    for stack, count in samples(path):
        total += count
        kinds[kind(stack)] += count
        test = TEST_FRAME.search(stack)
        if test:
            tests[f"{test.group(2)}::{test.group(1)}"] += count
    seconds = lambda count: round(count / RATE, 1)  # noqa: E731
    return {
        "sampled_seconds": seconds(total),
        "by_kind": {name: {"seconds": seconds(count), "share": round(count / total, 3)}
                    for name, count in kinds.most_common()},
        "top_tests_seconds": {name: seconds(count) for name, count in tests.most_common(15)},
    }


def record(path):
    """Runs the suite under py-spy, stacks to `path`; returns pytest's summary line."""
    command = ["py-spy", "record", "-r", str(RATE), "-f", "raw", "-o", path, "--nonblocking",
               "--subprocesses", "--", *PYTEST]
    try:
        done = subprocess.run(command, cwd=harness.ROOT, capture_output=True, text=True,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    except FileNotFoundError:
        sys.exit("suite_time_profile: py-spy is not installed (pip install py-spy)")
    summary = [line for line in done.stdout.splitlines() if " passed" in line or " failed" in line]
    return summary[-1].strip() if summary else done.stdout[-500:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--record", metavar="RAW", help="run the suite, stacks to RAW")
    source.add_argument("--raw", help="a py-spy raw file from an earlier --record")
    parser.add_argument("--json", default=harness.experiment_result("suite_time_profile"),
                        help="result file (- for none)")
    args = parser.parse_args(argv)
    result = {"pytest": record(args.record)} if args.record else {}
    result.update(profile(args.record or args.raw))
    harness.write("suite_time_profile", result, args=argparse.Namespace(json=args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
