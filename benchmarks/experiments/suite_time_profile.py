"""Where does `make test`'s CPU time go? Sampled stacks of the whole suite, by kind of work.

    pip install py-spy   # a sampling profiler; not one of kseq's dependencies
    python benchmarks/experiments/suite_time_profile.py --record /tmp/suite.txt \
        --json benchmarks/experiments/results/suite_time_profile.json
    python benchmarks/experiments/suite_time_profile.py --raw /tmp/suite.txt   # again, no run

The question (issue #29: `make test` within 15 minutes on an AVX2-only 2-core CPU): is
the suite's time in running tiny models, or in the work around them? `--record` runs
`make test`'s pytest command under `py-spy record --subprocesses` (Python stacks of the
two xdist workers and of every child process a test starts, 25 samples a second) and
keeps the raw stacks; `--raw` reads such a file. Each sample gets one kind, the first
that matches from the top of this list: tracing (`func_graph_from_py_func`: Python
building a graph, also when a save or a `tf.data` map triggers it), writing a
SavedModel, saving or loading a `.keras` file, creating a `tf.data` iterator, other
eager `tf.data` ops (passes such as `reduce` and `get_single_element`, building
datasets, reading batches), running compiled functions and eager ops (`quick_execute`,
or a generated op wrapper on top of the stack), imports, and the rest ("other"); the
same kinds with a `child_` prefix for the child processes tests start. Also the tests
(first `test_*` frame in a worker) with the most samples. Prints JSON.

py-spy samples Python threads while they are not idle: a thread blocked while
TensorFlow's own threads run its kernels is not counted, and those threads are not
sampled. "running" is therefore the Python threads' own share of running ops (inline
kernels, dispatch, function set-up), a lower bound on kernel time; compare the sampled
total with the run's CPU time (`/usr/bin/time`) to bound the rest.
"""

import argparse
import collections
import itertools
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
    ("keras_files", "saving_lib.py"),  # saving and loading `.keras` files
    ("tf_data_iterators", "make_iterator"),
    ("tf_data_ops", "gen_dataset_ops.py"),  # eager passes (reduce, get_single_element), next
    ("running", "quick_execute"),
    ("imports", "_find_and_load"),
]
TEST_FRAME = re.compile(r"(?<![\w.])(test_\w+) \(((?:test_\w+|\w+_fixtures|conftest)\.py):\d+\)")
RECORD_START = re.compile(r'process \d+:"')


def samples(path):
    """`(stack, count)` of a py-spy raw file (`frame;frame;... count` records). A child's
    command line keeps its newlines (`python -c` scripts), so a record runs until the next
    line that starts a record (`process N:"`, the root's frame)."""
    record = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        # A last record start flushes the file's last record.
        for line in itertools.chain(handle, ['process 0:"end of file"']):
            if RECORD_START.match(line) and record:
                match = re.match(r"^(.*) (\d+)$", "".join(record).rstrip("\n"), re.S)
                if match:
                    yield match.group(1), int(match.group(2))
                record = []
            record.append(line)


def kind(stack):
    """The kind of work of one sampled stack (see the module docstring); a child process's
    kinds start with `child_`."""
    processes = [m.start() for m in RECORD_START.finditer(stack)]
    own = stack[processes[-1]:] if processes else stack
    in_worker = bool(processes) and WORKER in own[:300]
    if len(processes) == 1 and not in_worker:
        return "controller"  # pytest's own process
    # Children name their own process (one in a record that `samples` could not join shows
    # none: counted as a child too).
    prefix = "" if in_worker else "child_"
    found = next((name for name, pattern in KINDS if pattern in own), None)
    # A generated op wrapper (`gen_*_ops.py`) on top of the stack: an eager op running.
    if found is None:
        found = "running" if re.search(r"/gen_\w+_ops\.py:\d+\)$", own) else "other"
    return prefix + found


def profile(path):
    """Sampled seconds by kind (each sample counted once, in its first kind) and the tests
    with most samples in the xdist workers (a child's samples are credited to no test)."""
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
    if done.returncode != 0:
        sys.exit(f"suite_time_profile: the run failed (exit {done.returncode}):\n"
                 f"{done.stderr[-2000:]}{done.stdout[-2000:]}")
    summary = [line for line in done.stdout.splitlines() if " passed" in line]
    return summary[-1].strip() if summary else ""


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
