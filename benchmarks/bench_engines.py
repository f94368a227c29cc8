"""One preset's weights through four engines, each in a fresh process: speed, memory, agreement.

    .venv/bin/python benchmarks/bench_engines.py --threads-list 1   # ~6 min on a quiet 2-core CPU
    .venv/bin/python benchmarks/bench_engines.py             # one and two threads: ~15 min

The engines, on the same `libreoffice_en_fr_transformer` weights and the same
committed slice paragraphs:

- `kseq`: the model in process (`kseq.zoo.translator`, `translate()`: its
  compiled, compacting search, no XLA);
- `kseq_export`: kseq's SavedModel exports (`serving_default`, one export per
  beam size: the search is fixed at export) loaded by plain TensorFlow in a
  process that never imports kseq, as TF Serving runs them, sent the same
  length-sorted batches `translate()` makes;
- `ct2_float32` and `ct2_int8`: the CTranslate2 export (`kseq export --format
  ctranslate2`) through `kseq.zoo.translator(folder, compute_type=...)`: kseq's
  own tokenizer around CTranslate2's `translate_batch` (in a process that
  imported kseq's Python API, hence TensorFlow too).

Beside them, `ct2_command`: the command a user runs on that folder, `kseq translate
FOLDER --beam B` with the `--sentences` paragraphs on stdin, in a fresh process that
never imports TensorFlow (`kseq.ctranslate2`, `kseq.text.PlainTokenizer`): its
wall time from start to exit (start-up and loading included, so not a
sentences/s peer of the warm engines), its peak RSS (the command's own process; its
stderr filter, a small second process, is not added), and its outputs' agreement
with `ct2_float32`'s batch-64 runs (the command translates in batches of 64, its
default; with another `--batch` the agreement is not taken). CTranslate2 picks its
own thread count there. Both sides tokenise with `PlainTokenizer`: the agreement
checks the command, not the tokenizer (`experiments/plain_tokenizer_agreement.py`
does that).

Each engine runs greedy and beam 4 at batch 1 (`--batch-one-sentences` paragraphs,
one call each) and at batch 64 (`--sentences` paragraphs), with one and with two
threads (TensorFlow's intra- and inter-op pools, CTranslate2's `intra_threads`), in
a fresh process per engine and thread count: each search is run once untimed on one
batch first (tracing, warm kernels), then timed once. The processes are alternated
engine by engine within a round, `--rounds` rounds; the figures are medians over the
rounds. Reported per engine and setting: sentences/s, the process's peak RSS (after
loading and every search), ms per output word (wall time over the output's words
plus one end token each, counted on each engine's own output), the outputs' agreement
with `kseq` (share of identical strings; CTranslate2's beam search normalises by
`L^0.6`, kseq's default by GNMT's), and the load average at each process's start.

Prints JSON and writes benchmarks/results/bench_engines.json.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

four engines on `libreoffice_en_fr_transformer`'s weights, one thread, each in a fresh
process, three alternated rounds, medians (`bench_engines.py --threads-list 1`, AVX-512 CPU,
load 0.5–0.9; 200 slice paragraphs at batch 64, 40 one at a time): sentences/s, kseq in
process / its SavedModel in a process without kseq (same length-sorted batches) / CT2
float32 / CT2 int8: greedy batch 1 12.2 / 14.4 / 20.8 / 73.5, batch 64 69.3 / 72.6 / 123.2 /
176.4; beam 4 batch 1 7.1 / 7.3 / 14.4 / 32.9, batch 64 24.3 / 22.5 / 40.7 / 62.8. kseq /
CT2 float32: greedy **0.58×** (batch 1) and **0.56×** (64), beam 4 **0.50×** and **0.60×**;
export / in process 0.93–1.19×; peak RSS 1,278 / 1,453 / 937 / 911 MB (importing TensorFlow
and tensorflow_text alone: 690 MB); the export's outputs identical to kseq's, CT2 float32
greedy identical, beam 4 97.5% (`L^0.6` vs GNMT)

the same four engines with **two threads** each (`bench_engines.py --threads-list 2 --json
benchmarks/results/bench_engines_threads2.json`, AVX-512/AMX CPU, load 1.0–2.1, three
alternated rounds, medians; not comparable with the one-thread row, measured on another
machine): sentences/s, kseq / its SavedModel / CT2 float32 / CT2 int8: greedy batch 1 13.9 /
14.1 / 7.5 / 10.8, batch 64 107.1 / 107.7 / 113.5 / 114.8; beam 4 batch 1 8.8 / 9.5 / 5.1 /
4.3, batch 64 40.5 / 41.7 / 57.7 / 65.1. kseq / CT2 float32: greedy **1.84×** (batch 1) and
**0.94×** (64), beam 4 **1.74×** and **0.70×**; export / in process 1.01–1.08×; peak RSS
1,268 / 1,451 / 957 / 924 MB; the export identical to kseq, CT2 float32 greedy identical,
beam 4 97.5%

the four engines again with **one thread**, plus the command on the CT2 export
(`bench_engines.py --threads-list 1 --json
benchmarks/results/bench_engines_threads1_amx.json`, AVX-512/AMX CPU, load 1.0–1.4, three
alternated rounds, medians; not comparable with the AVX-512 row above, another machine):
sentences/s, kseq / its SavedModel / CT2 float32 / CT2 int8: greedy batch 1 17.2 / 17.1 /
39.0 / 70.4, batch 64 75.2 / 79.1 / 144.2 / 235.7; beam 4 batch 1 10.2 / 10.4 / 22.6 / 51.6,
batch 64 24.3 / 25.2 / 49.0 / 67.5. kseq / CT2 float32: greedy **0.44×** (batch 1) and
**0.52×** (64), beam 4 **0.45×** and **0.50×**: on this CPU the batch-1 goal (0.5×) is
missed with one thread (CT2 runs 1.2–1.9× faster here than on the AVX-512 machine, kseq
1.0–1.4×); export / in process 1.00–1.05×; peak RSS 1,259 / 1,398 / 974 / 925 MB; CT2
float32 greedy identical to kseq, beam 4 97.5%. **`kseq translate CT2_FOLDER`** (a fresh
process that imports no TensorFlow: `kseq.text.PlainTokenizer`; CTranslate2's own thread
count), the 200 paragraphs on stdin, batch 64: peak RSS **159 MB** greedy, **239 MB** beam 4
(goal: ≤ 600 MB), 2.5 s and 4.3 s from start to exit, outputs identical to CT2 float32's in
process on 200/200 (both tokenise with `PlainTokenizer`; its agreement with the in-graph
tokenizer: `experiments/plain_tokenizer_agreement.py`, 37,418/37,418 pairs (train, valid,
test), both sides). Why batch 1 stays under 0.5× here
(`benchmarks/experiments/decode_step_parts.py`, one thread, greedy, forced lengths 8 and 48,
`experiments/results/decode_step_parts.json`): a step costs kseq **1.98 ms** and CT2 **0.97
ms**; the step's 25 matrix products alone (19.1 MB of weights, read once a step at batch 1)
take 0.94 ms in a TensorFlow loop and 0.71 ms in NumPy, so CT2's whole step costs what
TensorFlow's products alone cost; kseq's other ~1.0 ms is dispatching the loop body's 811
graph nodes (901 before this session's scatter-index change; the ten layer norms, 21 nodes
each in a node count not kept in the JSON, are 0.18 ms), and each call has 7.3 ms of fixed
work (tokenising, encoder, cross-attention keys, detokenising) against 1.4 ms. A fused layer
norm through the FusedBatchNorm pattern grappler rewrites for Keras 2 did not pay (2.10–2.20
ms a step against 1.91–1.98, two alternated runs each of a throw-away script, not kept)
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import harness  # benchmarks/harness.py, before TensorFlow

PRESET = "libreoffice_en_fr_transformer"
SMOKE_PRESET = "numbers_fr_transformer"
ENGINES = ("kseq", "kseq_export", "ct2_float32", "ct2_int8")
BEAMS = (1, 4)

# The exported model's process: plain TensorFlow (and tensorflow_text's ops), no kseq.
SERVING_CHILD = r"""
import json, resource, sys, time
import tensorflow as tf
import tensorflow_text  # the tokenizer ops, as TF Serving links them
settings = json.loads(sys.argv[1])
tf.config.threading.set_intra_op_parallelism_threads(settings["threads"])
tf.config.threading.set_inter_op_parallelism_threads(settings["threads"])
assert "kseq" not in sys.modules
served = {beam: tf.saved_model.load(path).signatures["serving_default"]
          for beam, path in settings["exports"].items()}

def run(beam, texts, batch):
    # Batches of similar lengths, as `translate()` cuts them (sorted by characters): a
    # client's choice, made the same on both sides.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    outputs = [None] * len(texts)
    for start in range(0, len(texts), batch):
        rows = order[start:start + batch]
        out = served[beam](text=tf.constant([texts[i] for i in rows]))
        for i, row in zip(rows, out["text"].numpy()):
            outputs[i] = row[0].decode("utf-8")
    return outputs

results = {}
for name, (beam, batch, texts) in settings["runs"].items():
    run(beam, texts[:batch], batch)  # the first call traces nothing, but warms the kernels
    started = time.perf_counter()
    outputs = run(beam, texts, batch)
    results[name] = {"seconds": time.perf_counter() - started, "outputs": outputs}
results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(results))
"""


def settings_runs(sources, batch_one_sentences, batch):
    """`{name: (beam, batch, texts)}`: greedy and beam 4 at batch 1 and at `batch`."""
    runs = {}
    for beam in BEAMS:
        runs[f"beam{beam}_batch1"] = (beam, 1, sources[:batch_one_sentences])
        runs[f"beam{beam}_batch{batch}"] = (beam, batch, sources)
    return runs


def kseq_child(settings):
    """The in-process engines (`kseq`, `ct2_*`): one process, every run; JSON on stdout."""
    threads = settings["threads"]
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    from kseq.zoo import translator

    engine = settings["engine"]
    if engine == "kseq":
        model = translator(settings["preset"])
        search = {}
    else:
        compute_type = "int8" if engine == "ct2_int8" else "float32"
        model = translator(settings["ct2"], compute_type=compute_type, intra_threads=threads)
        search = {"length_penalty": "fairseq"}  # the one CTranslate2 has: `L^alpha`
    results = {}
    for name, (beam, batch, texts) in settings["runs"].items():
        model.translate(texts[:batch], beam_size=beam, batch_size=batch, **search)  # traces
        started = time.perf_counter()
        outputs = model.translate(texts, beam_size=beam, batch_size=batch, **search)
        results[name] = {"seconds": time.perf_counter() - started, "outputs": outputs}
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(results))


def prepare(folder, preset, beams):
    """Writes the SavedModel exports (one per beam size) and the CTranslate2 folder from
    `preset`, in a child process (this one never loads TensorFlow)."""
    code = ("import sys, json\n"
            "from kseq.zoo import translator\n"
            "from kseq.models.translator.ctranslate2_export import export_ctranslate2\n"
            "folder, preset, beams = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])\n"
            "model = translator(preset)\n"
            "for beam in beams:\n"
            "    model.export(f'{folder}/beam{beam}/1', beam_size=beam)\n"
            "export_ctranslate2(model, f'{folder}/ct2')\n")
    subprocess.run([sys.executable, "-c", code, folder, preset, json.dumps(list(beams))],
                   check=True)  # the harness set TensorFlow's log level for children too
    return {"exports": {str(beam): f"{folder}/beam{beam}/1" for beam in beams},
            "ct2": f"{folder}/ct2"}


def run_engine(engine, threads, runs, paths, preset):
    """One fresh process for `engine` at `threads`: its results and the load at its start."""
    load = harness.load_average()
    if engine == "kseq_export":
        settings = {"threads": threads, "exports": paths["exports"],
                    "runs": {name: (str(beam), batch, texts)
                             for name, (beam, batch, texts) in runs.items()}}
        command = [sys.executable, "-c", SERVING_CHILD, json.dumps(settings)]
    else:
        settings = {"engine": engine, "threads": threads, "preset": preset,
                    "ct2": paths["ct2"], "runs": runs}
        command = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(settings)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{engine} ({threads} threads) failed: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_average"] = load
    return result


# Runs a command and writes its peak RSS to a file. The benchmark's own process holds
# TensorFlow, and a child forked from it counts those pages in its peak until it execs; a
# child of this small launcher counts only its own.
PEAK_RSS_LAUNCHER = r"""
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


def run_command(beam, texts, folder):
    """`kseq translate FOLDER --beam BEAM` on `texts` (stdin) in a fresh process: its wall
    seconds, peak RSS and output lines."""
    command = [sys.executable, "-m", "kseq.cli", "translate", folder, "--beam", str(beam),
               "--length-penalty", "fairseq"]
    with tempfile.TemporaryDirectory() as scratch:
        rss_file = os.path.join(scratch, "peak_rss_kb")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", PEAK_RSS_LAUNCHER, rss_file, *command],
                              input="".join(text + "\n" for text in texts).encode("utf-8"),
                              capture_output=True, check=False)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: "
                               f"{done.stderr.decode('utf-8', 'replace')[-2000:]}")
        with open(rss_file) as handle:
            peak_rss_kb = int(handle.read())
    return {"seconds": seconds, "peak_rss_mb": peak_rss_kb / 1024,
            "outputs": done.stdout.decode("utf-8").splitlines()}


def summarise_command(results, rounds, batch):
    """Medians of the `ct2_command` runs, and their agreement with `ct2_float32`'s runs at
    batch 64, the command's own batch size (CTranslate2's outputs do not depend on threads;
    None when the benchmark ran another `batch`)."""
    reference = next(value for key, value in rounds.items() if key.startswith("ct2_float32/"))
    summary = {}
    for name, measured in results.items():
        same = None
        if batch == 64:
            theirs = reference[0][f"{name}_batch64"]["outputs"]
            same = round(sum(a == b for a, b in zip(measured[0]["outputs"], theirs))
                         / max(1, len(theirs)), 4)
        summary[name] = {
            "process_seconds": round(statistics.median(r["seconds"] for r in measured), 3),
            "peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in measured)),
            "identical_to_ct2_float32": same,
            "rounds_seconds": [round(r["seconds"], 3) for r in measured]}
    return summary


def summarise(rounds, runs):
    """Medians over rounds per engine, thread count and run; agreement with `kseq`."""
    summary = {}
    for key, results in rounds.items():  # key: "engine/threads"
        engine, threads = key.split("/")
        reference = rounds[f"kseq/{threads}"][0]
        entry = {"peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in results)),
                 "load_average_at_start": [r["load_average"] for r in results]}
        for name in runs:
            seconds = statistics.median(r[name]["seconds"] for r in results)
            outputs = results[0][name]["outputs"]
            words = sum(len(output.split()) + 1 for output in outputs)  # and each end token
            same = sum(a == b for a, b in zip(outputs, reference[name]["outputs"]))
            entry[name] = {"sentences_per_second": round(len(outputs) / seconds, 2),
                           "ms_per_output_word": round(1000 * seconds / words, 3),
                           "identical_to_kseq": round(same / max(1, len(outputs)), 4),
                           "rounds_seconds": [round(r[name]["seconds"], 3) for r in results]}
        summary[key] = entry
    return summary


def ratios(summary, runs, threads_list):
    """Per thread count and run: each engine's sentences/s over kseq's in-process figure."""
    out = {}
    for threads in threads_list:
        kseq = summary[f"kseq/{threads}"]
        for engine in ENGINES[1:]:
            other = summary[f"{engine}/{threads}"]
            out[f"{engine}_over_kseq/{threads}"] = {
                name: harness.ratio(other[name]["sentences_per_second"],
                                    kseq[name]["sentences_per_second"]) for name in runs}
    return out


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (median)")
    parser.add_argument("--threads-list", type=int, nargs="+", default=[1, 2],
                        help="thread counts to run each engine at")
    parser.add_argument("--sentences", type=int, default=200,
                        help="slice paragraphs for the batch-64 runs (at most 200)")
    parser.add_argument("--batch-one-sentences", type=int, default=40,
                        help="slice paragraphs for the batch-1 runs")
    parser.add_argument("--batch", type=int, default=64, help="the large batch")
    args = harness.parse(parser, argv, keras=False)
    if args.batch < 2:  # batch 1 is always run: a second one would replace it
        parser.error(f"--batch must be at least 2 (batch 1 is run anyway). Received: "
                     f"--batch {args.batch}")
    preset = PRESET
    if args.smoke:
        preset, args.rounds, args.threads_list = SMOKE_PRESET, 1, [1]
        args.sentences, args.batch_one_sentences, args.batch = 8, 2, 4
    # The committed slice. This imports TensorFlow here (through kseq.data.pipeline); the
    # timed engines run in fresh processes of their own.
    from kseq.presets.catalog import slice_pairs

    sources = [source for source, _ in slice_pairs(preset)[: args.sentences]]
    runs = settings_runs(sources, args.batch_one_sentences, args.batch)
    started = time.perf_counter()
    rounds = {f"{engine}/{threads}": [] for threads in args.threads_list for engine in ENGINES}
    command_rounds = {f"beam{beam}": [] for beam in BEAMS}
    with tempfile.TemporaryDirectory() as folder:
        paths = prepare(folder, preset, BEAMS)
        for _ in range(args.rounds):
            for threads in args.threads_list:
                for engine in ENGINES:
                    rounds[f"{engine}/{threads}"].append(
                        run_engine(engine, threads, runs, paths, preset))
            for beam in BEAMS:
                command_rounds[f"beam{beam}"].append(run_command(beam, sources, paths["ct2"]))
    summary = summarise(rounds, runs)
    result = {"preset": preset, "sentences": len(sources),
              "batch_one_sentences": args.batch_one_sentences, "batch": args.batch,
              "rounds": args.rounds, "engines": summary,
              "ratios_sentences_per_second": ratios(summary, runs, args.threads_list),
              "ct2_command": summarise_command(command_rounds, rounds, args.batch),
              "seconds": round(time.perf_counter() - started, 1)}
    harness.write("bench_engines", result, args)
    return result


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        kseq_child(json.loads(sys.argv[2]))
        sys.exit(0)
    sys.exit(0 if main() else 1)
