"""`kseq train` on corpora of growing size: time to the first step, peak memory, pipeline speed.

For each corpus (a glob of gzip TSV shards, e.g. written by
`benchmarks/synthetic_corpus.py`), runs `kseq train RECIPE --data GLOB
--minutes M` in a child with a fresh `$KSEQ_HOME` (a cold start: preparation,
vocabulary and tokenisation included), then again into a new output folder with
the same `$KSEQ_HOME` (a second run of the same data), and records:

- `first_step_s`: from the command's start to the first finished training step
  (the run checkpoints every step: the first `backup/step-*.json` appearing), and
  `starting_s` (the "starting at step" line);
- `peak_rss_mb`: the child's peak resident memory (`ru_maxrss`);
- `pipeline_ratio`: real tokens per second of the input pipeline alone (reading
  the token shards to padded batches) over those of training steps on the same
  batches, measured in this process after the cold run (the peer is the model's
  own train step, same run).

Prints JSON (default `benchmarks/results/bench_corpus_scale.json`). `--smoke`
makes a 3,000-pair corpus and trains the tiny numbers recipe on it.

Example (a shell; an hour or more at 10M pairs):
    python benchmarks/synthetic_corpus.py /tmp/c300k --pairs 300000 --shards 4
    python benchmarks/bench_corpus_scale.py --corpus 300k='/tmp/c300k/*.tsv.gz' --minutes 1

Measured (the method notes docs/results.md held; its table keeps the headline figures):

`kseq train libreoffice_en_fr_transformer --data 'GLOB' --minutes 0.5` on synthetic gzip
corpora (`bench_corpus_scale.py`, AMX CPU, a test suite sharing the 2 cores, load 3–4): peak
RSS 2,110 MB at 300k pairs, 2,481 MB at 3M, 2,477 MB at 10M (1.17×); first step, cold
(preparation, vocabulary, tokenisation): 55 s at 300k, 388 s at 3M, 961 s at 10M; a second
run of the same data: 22 s / 37 s / 50 s; the input pipeline alone 153–250× the training
steps' real tokens/s. 10M again on a quiet machine (`bench_corpus_scale_10m_quiet.json`):
cold first step 597 s, second run 32 s, peak RSS 2,474 MB. With the preparation in one
process a core (`corpus_parts`; `bench_corpus_scale_10m_parallel.json`, quiet): cold first step
387 s, second run 32 s, peak RSS 2,433 MB
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402  benchmarks/harness.py, before TensorFlow



def timed_training(recipe, data, output, home, minutes):
    """Runs `kseq train` once; returns its timings, peak RSS and exit code."""
    env = dict(os.environ, KSEQ_HOME=home, PYTHONUNBUFFERED="1")  # the harness quiets TF
    command = [sys.executable, "-m", "kseq.cli", "train", recipe, "--data", data,
               "--output", output, "--minutes", str(minutes), "--save-every", "1"]
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    first_step = []
    watcher = threading.Thread(target=_first_checkpoint, daemon=True,
                               args=(os.path.join(output, "backup"), child, started, first_step))
    watcher.start()
    seen, starting, tail = b"", None, []
    while True:
        chunk = child.stdout.read1(65536)
        if not chunk:
            break
        seen = (seen + chunk)[-4096:]
        if starting is None and b"starting at step" in seen:
            starting = time.monotonic() - started
        tail = (tail + [chunk])[-8:]
    code = child.wait()
    watcher.join()
    first_step = first_step[0] if first_step else None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"exit_code": code, "starting_s": _round(starting), "first_step_s": _round(first_step),
            "total_s": round(time.monotonic() - started, 1),
            "peak_rss_mb_children_so_far": round(usage.ru_maxrss / 1024),
            "output_tail": b"".join(tail).decode("utf-8", "replace")[-600:]}


def _first_checkpoint(folder, child, started, found):
    """Appends to `found` the time the first checkpoint appears in `folder`."""
    while child.poll() is None:
        if os.path.isdir(folder) and any(name.endswith(".json") for name in os.listdir(folder)):
            found.append(time.monotonic() - started)
            return
        time.sleep(0.05)


def _round(value):
    return None if value is None else round(value, 1)


def peak_rss_of(function):
    """Runs `function` in a forked child; its result dict gains the child's peak RSS."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        result = function()
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        text = handle.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def pipeline_ratio(run_folder, home, batches=60):
    """Real tokens/s of reading the run's token store to batches, over training steps'."""
    os.environ["KSEQ_HOME"] = home
    import numpy as np

    from kseq import zoo
    from kseq.training import load_trained
    from kseq.training.run_folder import RunFolder
    from kseq.training.training_data import TrainingData, prepared_corpus

    run = RunFolder(run_folder)
    recipe = zoo.load_recipe(run.file("recipe.json"))
    model = load_trained(run_folder)
    model.compile_from_recipe(recipe.get("training", {}))
    corpus = prepared_corpus(recipe, run.recorded_data_source())
    data = TrainingData(corpus, model, recipe)

    def real_tokens(batch):
        _, labels = batch
        return int(np.sum(np.asarray(labels) > 0))

    stream = data.stream(seed=0, epochs=(0, 1))
    started, tokens = time.perf_counter(), 0
    kept = []
    for index, batch in enumerate(stream.take(batches * 4)):
        tokens += real_tokens(batch)
        if index < batches:
            kept.append(batch)
    pipeline = tokens / (time.perf_counter() - started)
    model.train_on_batch(*kept[0])  # traced once before timing
    started, tokens = time.perf_counter(), 0
    for features, labels in kept[1:]:
        model.train_on_batch(features, labels)
        tokens += real_tokens((features, labels))
    training = tokens / (time.perf_counter() - started)
    return {"pipeline_tokens_per_s": round(pipeline), "train_tokens_per_s": round(training),
            "pipeline_ratio": round(pipeline / training, 1)}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--corpus", action="append", default=[],
                        help="NAME=GLOB, repeatable (e.g. 300k='/tmp/c300k/*.tsv.gz')")
    parser.add_argument("--recipe", default="libreoffice_en_fr_transformer")
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    args = harness.parse(parser, argv, keras=False)  # TensorFlow only in the children
    work = args.work or tempfile.mkdtemp(prefix="kseq-corpus-bench-")
    corpora = args.corpus
    if args.smoke:
        from synthetic_corpus import write_corpus

        write_corpus(os.path.join(work, "smoke"), 3000, shards=2)
        corpora, args.recipe, args.minutes = [f"3k={work}/smoke/*.tsv.gz"], "numbers_fr_tiny", 0.1
    results = {"recipe": args.recipe, "minutes": args.minutes, "corpora": {}}
    for item in corpora:
        name, data = item.split("=", 1)
        home = os.path.join(work, f"home-{name}")
        shutil.rmtree(home, ignore_errors=True)
        row = {"data": data}
        row["cold"] = peak_rss_of(lambda: timed_training(
            args.recipe, data, os.path.join(work, f"run-{name}-cold"), home, args.minutes))
        row["second"] = peak_rss_of(lambda: timed_training(
            args.recipe, data, os.path.join(work, f"run-{name}-second"), home, args.minutes))
        row["pipeline"] = peak_rss_of(lambda: pipeline_ratio(
            os.path.join(work, f"run-{name}-cold"), home))
        results["corpora"][name] = row
        print(json.dumps({name: row}), file=sys.stderr, flush=True)
    harness.write("bench_corpus_scale", results, args)
    return results


if __name__ == "__main__":
    main()
