"""What every benchmark shares: arguments, seeding, the machine's facts, timing, one JSON writer.

A benchmark script imports this module before TensorFlow (it sets TensorFlow's
C++ log level once, here), builds its parser with `arguments(...)`, reads it
with `parse(...)` (seeds Python, NumPy and Keras; applies `--threads`), times
with `median_seconds` / `alternated`, and ends with `write(name, result, args)`,
which adds `machine()` (CPU flags, load average, cores, threads), prints the JSON
and writes `benchmarks/results/<name>.json` unless `--json` says otherwise.
Every script has `--smoke`: tiny sizes, seconds of work, nothing written unless
`--json` names a file (what `tests/benchmarks/test_harness.py` runs).

    parser = harness.arguments(__doc__, repeats=5)
    parser.add_argument("--batch", type=int, default=64)
    args = harness.parse(parser, argv)
    first, seconds = harness.median_seconds(lambda: search(start), args.repeats)
    harness.write("bench_search", {"sentences_per_second": 64 / seconds}, args)

Example:
>>> parser = arguments("A benchmark.\\n\\nMore.", repeats=3)
>>> args = parse(parser, ["--smoke", "--json", "-"], keras=False)
>>> args.smoke, args.repeats, args.seed
(True, 1, 0)
>>> calls = []
>>> first, median = median_seconds(lambda: calls.append(1), repeats=3)
>>> len(calls), median >= 0.0
(4, True)
>>> sorted(alternated({"a": lambda: 1.0, "b": lambda: 2.0}, rounds=3)["median"].items())
[('a', 1.0), ('b', 2.0)]

Running them

Every reusable benchmark runs through `benchmarks/harness.py`: the common options `--seed`,
`--threads`, `--json PATH` (default `benchmarks/results/<name>.json`) and `--smoke` (tiny
sizes, seconds of work: what `tests/benchmarks/` runs), and one JSON writer that records the
machine (CPU flags, load average, cores, threads) beside the figures.

```bash
.venv/bin/python benchmarks/bench_search.py        # search speed vs keras-hub BeamSampler
.venv/bin/python benchmarks/quality_numbers.py     # the numbers quality figures above
.venv/bin/python benchmarks/bench_export.py        # SavedModel latency / throughput
.venv/bin/python benchmarks/experiments/detok_faithfulness.py  # detok(tok(x)) == x on real French/English text
.venv/bin/python benchmarks/bench_translator.py --json benchmarks/results/bench_translator_run1.json  # kseq vs a keras-hub Transformer, same size (~10 min; --peer-xla: also the peer under XLA; --bf16: also kseq under mixed_bfloat16)
.venv/bin/python benchmarks/bench_translator_summary.py benchmarks/results/bench_translator_run*.json  # each ratio per run and its median
.venv/bin/python benchmarks/bench_real_rows_train_step.py  # kseq's real-rows train step vs Keras's step, same model, interleaved (~1 min)
.venv/bin/python benchmarks/bench_epoch_order_pipeline.py  # kseq train's resumable epoch-ordered input stream vs a shuffle buffer
.venv/bin/python benchmarks/bench_cli_startup.py   # kseq --help / --version / presets vs `python -c "import tensorflow"`
.venv/bin/python benchmarks/bench_streaming_decode.py  # kseq translate on a stream vs the old one-call batch path, 100k lines (~4.5 min; --lines 1000000)
.venv/bin/python benchmarks/quality_libreoffice.py --arch transformer --minutes 40 --output runs/lo
.venv/bin/python benchmarks/quality_table.py       # the LibreOffice table (Translation), from the JSON; --docs rewrites it here
.venv/bin/python benchmarks/experiments/peer_opennmt_libreoffice.py --minutes 40 --output runs/peer  # OpenNMT-tf, own venv
.venv/bin/python benchmarks/bench_onmt_config.py   # kseq on the OpenNMT-tf configuration: real tokens/s vs the peer's
.venv/bin/python benchmarks/bench_onmt_same_hour.py --rounds 3 --peer-minutes 6 --steps 30  # kseq (float32, bf16) and OpenNMT-tf alternated, same machine, same hour (~35 min)
.venv/bin/python benchmarks/experiments/onmt_step_parts.py  # where a step of that training goes, float32 vs bf16, and the matmul limits
.venv/bin/python benchmarks/quality_libreoffice.py --minutes 10 --precision mixed_bfloat16 --output runs/lo_bf16 --json benchmarks/results/quality_libreoffice_transformer_10min_mixed_bfloat16.json  # bf16 training's BLEU (and --precision float32 for its pair)
.venv/bin/python benchmarks/bench_ctranslate2.py   # kseq vs its own CTranslate2 export, same weights: identity, int8 BLEU, speed (~2 min)
.venv/bin/python benchmarks/bench_engines.py       # kseq in process, its SavedModel in a fresh process, CT2 float32/int8: batch 1 and 64, 1 and 2 threads, peak RSS (~12 min)
.venv/bin/python benchmarks/bench_scaling.py --threads 1  # scaling curves: decoding over batch 1-256 / beam 1-8, training over width 128-1024 / length 16-256 (JSON + PNG, ~8 min)
.venv/bin/python benchmarks/experiments/search_settings_libreoffice.py --model runs/lo/model.keras  # greedy/beam settings chosen on valid
.venv/bin/python benchmarks/experiments/alignment_numbers.py --model numbers_fr_transformer
```
"""

import argparse
import json
import os
import random
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

FOLDER = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FOLDER)
RESULTS = os.path.join(FOLDER, "results")
# The CPU features that decide TensorFlow's kernels (and so every speed figure).
CPU_FEATURES = ("avx", "amx", "fma")


def arguments(doc, repeats=None, seed=0):
    """An `argparse` parser with the common options; `doc` is the script's docstring (its
    first line is the description). `repeats`: the default of `--repeats` (no option if None).

    Common options: `--seed` (default `seed`), `--threads` (TensorFlow's intra- and
    inter-op threads; default: TensorFlow's choice), `--json PATH` (where the result
    goes; `-` for nowhere; default `benchmarks/results/<name>.json`, or nowhere with
    `--smoke`), `--smoke` (tiny sizes: seconds of work, for the smoke test).
    """
    parser = argparse.ArgumentParser(description=(doc or "").strip().split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=seed, help="seeds Python, NumPy and Keras")
    parser.add_argument("--threads", type=int, default=None,
                        help="TensorFlow intra- and inter-op threads (default: TF's choice)")
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="result file (default benchmarks/results/<name>.json; - for none)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: a seconds-long check")
    if repeats is not None:
        parser.add_argument("--repeats", type=int, default=repeats,
                            help="timed repeats (the median is reported)")
    return parser


def parse(parser, argv=None, keras=True):
    """`parser.parse_args(argv)`, then seeds everything (Keras too unless `keras=False`: a
    script that never loads TensorFlow) and applies `--threads`. With `--smoke`,
    `--repeats` (if the script has it) drops to 1."""
    args = parser.parse_args(argv)
    if args.smoke and getattr(args, "repeats", None) is not None:
        args.repeats = 1
    seed_everything(args.seed, keras=keras)
    if args.threads:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    return args


def seed_everything(seed, keras=True):
    """Seeds Python's `random`, NumPy's global generator and, if `keras` or already loaded,
    Keras (and so TensorFlow)."""
    random.seed(seed)
    import numpy as np

    np.random.seed(seed)
    if keras or "keras" in sys.modules:
        import keras

        keras.utils.set_random_seed(seed)


def cpu_flags():
    """The CPU's vector-instruction flags (AVX*, AVX-512*, AMX*, FMA) from /proc/cpuinfo,
    sorted; empty where the file is missing."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = next((line.split(":", 1)[1].split() for line in handle
                          if line.startswith("flags")), [])
    except OSError:
        flags = []
    return sorted({flag for flag in flags if flag.startswith(CPU_FEATURES)})


def load_average():
    """The 1, 5 and 15 minute load averages (a busy machine slows every figure), or None."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def machine():
    """The facts recorded with every figure: CPU flags, load average, cores, TF threads."""
    facts = {"cpu_flags": cpu_flags(), "load_average": load_average(), "cpus": os.cpu_count()}
    if "tensorflow" in sys.modules:
        import tensorflow as tf

        facts["threads"] = {"intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
                            "inter_op": tf.config.threading.get_inter_op_parallelism_threads()}
    return facts


def median_seconds(call, repeats, warmup=1):
    """`(first_call_seconds, median_seconds)` of `call()`: `warmup` untimed-for-the-median
    calls first (tracing, compilation; the first one's time is returned), then `repeats`
    timed calls. A result with `.numpy()` (or a nest of them) is read before the clock
    stops, so asynchronous TensorFlow work is counted."""
    first = None
    for _ in range(warmup):
        started = time.perf_counter()
        _finish(call())
        first = first if first is not None else time.perf_counter() - started
    times = []
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        _finish(call())
        times.append(time.perf_counter() - started)
    return first, statistics.median(times)


def _finish(result):
    if hasattr(result, "numpy"):
        result.numpy()
    elif isinstance(result, dict):
        for value in result.values():
            _finish(value)
    elif isinstance(result, (list, tuple)):
        for value in result:
            _finish(value)


def alternated(sides, rounds):
    """Runs each of `sides` (`{name: call}`, each call returning a figure) once per round,
    in turn, `rounds` times, so a drift of the machine's speed hits every side alike.
    Returns `{"rounds": {name: [figure per round]}, "median": {name: median figure}}`."""
    figures = {name: [] for name in sides}
    for _ in range(max(1, rounds)):
        for name, call in sides.items():
            figures[name].append(call())
    return {"rounds": figures,
            "median": {name: statistics.median(values) for name, values in figures.items()}}


def ratio(ours, theirs, digits=2):
    """`ours / theirs` rounded (None if `theirs` is 0 or missing)."""
    return round(ours / theirs, digits) if theirs else None


def experiment_result(name):
    """Where a one-off experiment (`benchmarks/experiments/`) keeps its result by default:
    `benchmarks/experiments/results/<name>.json` (a `path` for `write`)."""
    return os.path.join(FOLDER, "experiments", "results", f"{name}.json")


def result_path(name, args=None, default=None):
    """Where `write` puts the result of benchmark `name`: `--json` (`-`: nowhere), else
    nowhere with `--smoke`, else `default` (`-`: nowhere) or
    `benchmarks/results/<name>.json`."""
    path = getattr(args, "json", None)
    if path:
        return None if path == "-" else path
    if getattr(args, "smoke", False) or default == "-":
        return None
    return default or os.path.join(RESULTS, f"{name}.json")


def write(name, result, args=None, path=None, printed=None):
    """The one JSON writer: `result` with `machine()` added (unless it has a "machine"
    entry) is printed as indented JSON and written to `result_path(name, args, path)`. `printed`: the part to print, if not all of it (long per-fold lists).
    Returns the path written (or None)."""
    result = dict(result)
    result.setdefault("machine", machine())
    if getattr(args, "smoke", False):
        result["smoke"] = True
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text if printed is None else json.dumps(printed, indent=2, ensure_ascii=False))
    path = result_path(name, args, path)
    if path:
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return path


def read(name_or_path):
    """A result written by `write`: `benchmarks/results/<name>.json`, or a path."""
    path = name_or_path if name_or_path.endswith(".json") else os.path.join(
        RESULTS, f"{name_or_path}.json")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
