"""1 vs 2 localhost workers (`--strategy multi-worker`), a pinned core each: tokens/s, collectives.

    .venv/bin/python benchmarks/bench_multi_worker_scaling.py [--steps 40] [--json out.json]
    .venv/bin/python benchmarks/bench_multi_worker_scaling.py --smoke   # the tiny recipe, seconds

Three runs of `kseq.training.train` on the same recipe (default
`numbers_fr_transformer`, 2+2 layers, d 64; `--smoke`: `numbers_fr_tiny`), each
child `taskset`-pinned to its own core with one TensorFlow thread:

- `one_worker`: one process on core 0, the global batch B (a token budget);
- `one_worker_half`: one process on core 0, batch B/2 (one worker's share of compute);
- `two_workers`: `MultiWorkerMirroredStrategy`, two processes on 127.0.0.1 (cores 0 and 1),
  global batch B, so B/2 rows per worker.

Each reports the median step time after the first steps (tracing) and real target
tokens/s. The time per step spent in collectives (and waiting for the slower worker) is
estimated as `two_workers − one_worker_half`: the same compute per worker, plus the
all-reduce of every gradient (parameter bytes per step). Prints JSON.
"""

import json
import os
import socket
import subprocess
import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow

CHILD = r"""
import json, statistics, sys, time
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
import keras
from kseq.training import train
recipe, output, steps, overrides, strategy = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                              json.loads(sys.argv[4]), sys.argv[5])

class Clock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []
    def on_train_batch_begin(self, batch, logs=None):
        self.began = time.perf_counter()
    def on_train_batch_end(self, batch, logs=None):
        float(logs["loss"])
        self.times.append(time.perf_counter() - self.began)
        if len(self.times) >= steps:
            self.model.stop_training = True

clock = Clock()
model, splits, _ = train(recipe, output, epochs=1000, verbose=0, overrides=overrides,
                         strategy=strategy, save_every_steps=10**6, extra_callbacks=[clock])
tokens = sum(int(tf.math.count_nonzero(y))
             for _, y in model.preprocessor.tokenized(splits["train"]))
step = statistics.median(clock.times[3:])
print(json.dumps({"step_seconds": step, "steps": len(clock.times),
                  "real_tokens_per_step": tokens / clock.params["steps"],
                  "parameters": model.count_params(),
                  "replicas": model.distribute_strategy.num_replicas_in_sync}))
"""


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for one in sockets:
        one.bind(("127.0.0.1", 0))
    ports = [one.getsockname()[1] for one in sockets]
    for one in sockets:
        one.close()
    return ports


def _launch(core, recipe, output, steps, overrides, strategy, tf_config=None):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # the harness set the log level
    env.pop("TF_CONFIG", None)
    if tf_config:
        env["TF_CONFIG"] = json.dumps(tf_config)
    command = ["taskset", "-c", str(core), sys.executable, "-c", CHILD, recipe, output,
               str(steps), json.dumps(overrides), strategy]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=harness.ROOT)


def _result(child):
    out, err = child.communicate(timeout=1800)
    if child.returncode:
        raise SystemExit(f"a child failed ({child.returncode}): {err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def _summary(result, global_rows):
    return {"step_ms": round(result["step_seconds"] * 1000, 2),
            "global_token_budget": global_rows, "replicas": result["replicas"],
            "real_tokens_per_second": round(result["real_tokens_per_step"]
                                            / result["step_seconds"], 1)}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--recipe", default="numbers_fr_transformer")
    parser.add_argument("--steps", type=int, default=40, help="optimizer steps per run")
    parser.add_argument("--token-budget", type=int, default=2048,
                        help="the global batch B, in tokens (the recipe's token budget)")
    parser.add_argument("--train-size", type=int, default=4096)
    args = harness.parse(parser, argv, keras=False)
    if args.smoke:
        args.recipe, args.steps, args.token_budget, args.train_size = "numbers_fr_tiny", 6, 256, 128
    import tempfile

    work = tempfile.mkdtemp(prefix="kseq-scaling-")
    data = {"train_size": args.train_size, "valid_size": 0, "test_size": 4}

    def overrides(batch):
        # A token budget for either recipe: the tiny one's batch size is dropped for it.
        return {"data": data, "training": {"token_budget": batch, "batch_size": None,
                                           "bleu_subset": 0}}

    began = time.perf_counter()
    runs = {}
    for name, batch in (("one_worker", args.token_budget),
                        ("one_worker_half", args.token_budget // 2)):
        runs[name] = _summary(_result(_launch(0, args.recipe, f"{work}/{name}", args.steps,
                                              overrides(batch), "auto")), batch)
    workers = [f"127.0.0.1:{port}" for port in _free_ports(2)]
    children = [_launch(index, args.recipe, f"{work}/two_workers", args.steps,
                        overrides(args.token_budget), "multi-worker",
                        {"cluster": {"worker": workers}, "task": {"type": "worker",
                                                                  "index": index}})
                for index in range(2)]
    results = [_result(child) for child in children]
    chief = results[0]
    runs["two_workers"] = _summary(chief, args.token_budget)
    runs["two_workers"]["worker_step_ms"] = [round(r["step_seconds"] * 1000, 2) for r in results]
    parameters = chief["parameters"]
    collective_ms = runs["two_workers"]["step_ms"] - runs["one_worker_half"]["step_ms"]
    result = {
        "recipe": args.recipe, "steps": args.steps, "parameters": parameters,
        "gradient_bytes_per_step": parameters * 4, "runs": runs,
        "speedup_two_workers": round(runs["two_workers"]["real_tokens_per_second"]
                                     / runs["one_worker"]["real_tokens_per_second"], 3),
        "collective_ms_per_step_estimate": round(collective_ms, 2),
        "collective_share_of_step": round(collective_ms / runs["two_workers"]["step_ms"], 3),
        "seconds": round(time.perf_counter() - began, 1),
        "note": "collective_ms = two_workers step − one_worker_half step (same compute per "
                "worker); each child taskset-pinned to one core with one TF thread",
    }
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    harness.write("bench_multi_worker_scaling", result, args)


if __name__ == "__main__":
    sys.exit(main())
