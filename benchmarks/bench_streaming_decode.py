"""`kseq translate` reading stdin as a stream against the old batch path, in the same run.

Issue 47 item 6: `kseq translate numbers_fr_transformer --beam 1 < FILE` used to read all
of stdin, translate it in one `translate()` call (sorted by length, batches of 64) and
print everything at the end (20,000 lines: nothing for 39 s, then all, 1.0 GB). Now it
reads chunks (64 lines, doubling to 1,024) and writes each chunk's lines at once. Each side
runs in a fresh process on the same file of N number lines (English words, drawn from
`numbers_dataset` and repeated to N):

- `streaming`: the command itself, `python -m kseq.cli translate PRESET --beam 1 < FILE`.
- `batch`: the old path, in a `python -c` child: load the model as the command does
  (`kseq.training.load_trained`), read every line, one `model.translate(all, beam_size=1,
  return_scores=True)` call (the API's `batch_size=64`), print every line.

Per side: wall seconds from spawn to the first output line and to the last one; the
model-loaded moment (the batch child reports it; both children import and load the same,
so the streaming side's time "after load" subtracts the batch child's load seconds);
sentences/s after load; peak RSS of the child (`os.wait4`'s `ru_maxrss`) and its RSS
(`/proc/PID/status`) at each tenth of the output; and whether both wrote the same lines.
Prints JSON with the ratios streaming / batch. Usage:

    .venv/bin/python benchmarks/bench_streaming_decode.py             # 100,000 lines
    .venv/bin/python benchmarks/bench_streaming_decode.py --lines 1000000 --json PATH

Measured (the method notes docs/results.md held; its table keeps the headline figures):

`kseq translate numbers_fr_transformer --beam 1 < 100,000 lines` as a stream against the old
path (all lines through one `translate()` call, then printed), each in a fresh process, one
run each (`bench_streaming_decode.py`, AVX-512/AMX CPU, 2 cores shared with other work: load
1.8 at the start, 4.4 at the end): first line **1.2 s** after the model loaded (the old
path: 99 s, when everything was done); **1,022 sentences/s** against 995 (**1.03×**); peak
RSS **1,009 MB** against 1,058 MB, flat: 995 MB at a tenth of the output, 1,009 MB from
eight tenths on (TensorFlow and the model are ~940 MB of it: one line translated peaks at
942 MB); the same 100,000 lines. The 1M-line run (`--lines 1000000`, ~35 min of both cores)
was not made here
"""
import os
import subprocess
import sys
import tempfile
import threading
import time

import harness  # benchmarks/harness.py, before TensorFlow

PRESET = "numbers_fr_transformer"
DISTINCT = 100_000  # distinct number lines drawn; longer inputs repeat them in order

# The old path of `kseq translate` (before the command streamed), timed from inside: prints
# the wall-clock moment the model is loaded on stderr, then all results at once.
BATCH_CHILD = """
import sys, time
from kseq.cli.task_loading import _import_every_room
_import_every_room()
from kseq.training import load_trained
model = load_trained(sys.argv[1])
print(f"loaded {time.time()!r}", file=sys.stderr, flush=True)
texts = [line.rstrip(b"\\r\\n") for line in sys.stdin.buffer]
outputs = model.translate(texts, return_scores=True, beam_size=int(sys.argv[2]))
sys.stdout.write("".join(f"{text}\\n" for text, _ in outputs))  # n_best 1: one string
"""


def write_inputs(path, lines, seed):
    """`lines` number lines (English words) in `path`, `DISTINCT` distinct ones repeated."""
    from kseq.data import numbers_dataset

    distinct = min(lines, DISTINCT)
    pairs = numbers_dataset("fr", train_size=distinct, valid_size=0, test_size=0,
                            seed=seed)["train"]
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(lines):
            handle.write(pairs[index % distinct][0] + "\n")


def rss_mb(pid):
    """The resident set of process `pid` in MB (None once it has gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def run_side(command, inputs, lines, outputs):
    """Runs `command` with stdin `inputs`; reads its stdout into `outputs` line by line,
    timing the first and last lines and sampling RSS at each tenth. Returns the figures."""
    started_wall, started = time.time(), time.perf_counter()
    with open(inputs, "rb") as stdin, tempfile.TemporaryFile("w+") as stderr, \
            open(outputs, "w", encoding="utf-8") as out:
        child = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr,
                                 cwd=harness.ROOT, text=True)
        first, count, tenths, marks = None, 0, {}, {round(lines * k / 10) for k in
                                                     range(1, 11)}
        for line in child.stdout:
            count += 1
            first = first if first is not None else time.perf_counter() - started
            out.write(line)
            if count in marks:
                tenths[f"{count / lines:.1f}"] = rss_mb(child.pid)
        last = time.perf_counter() - started
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        errors = stderr.read()
    if child.returncode != 0 or count != lines:
        raise RuntimeError(f"{command[:4]} exited {child.returncode} after {count} lines: "
                           f"{errors[-2000:]!r}")
    loaded = [float(line.split()[1]) - started_wall for line in errors.splitlines()
              if line.startswith("loaded ")]
    return {"first_line_seconds": round(first, 2), "last_line_seconds": round(last, 2),
            "load_seconds": round(loaded[0], 2) if loaded else None,
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "rss_mb_at_output_fraction": tenths,
            "progress_lines": [line for line in errors.splitlines()
                               if line.startswith("kseq: translated")][-2:]}


def same_lines(path_a, path_b):
    """How many lines of two files are equal, line for line."""
    with open(path_a, encoding="utf-8") as a, open(path_b, encoding="utf-8") as b:
        return sum(x == y for x, y in zip(a, b))


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--lines", type=int, default=100_000,
                        help="input lines (default 100,000; the issue's figure is 1,000,000)")
    parser.add_argument("--beam", type=int, default=1, help="beam width (default: 1, greedy)")
    args = harness.parse(parser, argv, keras=False)
    lines = 300 if args.smoke else args.lines
    with tempfile.TemporaryDirectory() as folder:
        inputs = os.path.join(folder, "inputs.txt")
        write_inputs(inputs, lines, args.seed)
        python = [sys.executable]
        sides = {"streaming": python + ["-m", "kseq.cli", "translate", PRESET, "--beam",
                                        str(args.beam)],
                 "batch": python + ["-c", BATCH_CHILD, PRESET, str(args.beam)]}
        result = {name: run_side(command, inputs, lines, os.path.join(folder, name))
                  for name, command in sides.items()}
        identical = same_lines(*(os.path.join(folder, name) for name in sides))
    load = result["batch"]["load_seconds"]  # the same imports and load in both children
    for figures in result.values():
        figures["first_line_after_load_seconds"] = round(figures["first_line_seconds"] - load, 2)
        figures["sentences_per_second"] = round(lines / (figures["last_line_seconds"] - load), 1)
    streaming, batch = result["streaming"], result["batch"]
    report = {
        "preset": PRESET, "beam": args.beam, "lines": lines, **result,
        "ratio_streaming_to_batch": {
            "sentences_per_second": harness.ratio(streaming["sentences_per_second"],
                                                  batch["sentences_per_second"], 3),
            "wall_seconds": harness.ratio(streaming["last_line_seconds"],
                                          batch["last_line_seconds"], 3),
            "peak_rss": harness.ratio(streaming["peak_rss_mb"], batch["peak_rss_mb"], 3),
            "first_line_after_load": harness.ratio(streaming["first_line_after_load_seconds"],
                                                   batch["first_line_after_load_seconds"], 3)},
        "identical_lines": identical,
        "note": "one run of each side, streaming first; load_seconds is the batch child's "
                "spawn-to-loaded time, used for both sides",
    }
    harness.write("bench_streaming_decode", report, args)
    return report


if __name__ == "__main__":
    main()
