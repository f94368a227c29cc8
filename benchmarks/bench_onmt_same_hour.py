"""kseq and OpenNMT-tf 2.32 trained on OpenNMT-tf's configuration, alternated on one machine within the hour.

    python benchmarks/bench_onmt_same_hour.py --rounds 3 --peer-minutes 6 --steps 30

Issue #33 asks for the training comparison on the *same* machine within the
same hour, alternated, not against a figure from another day. Each round runs,
each in its own fresh process and one after the other:

1. OpenNMT-tf (`experiments/peer_opennmt_libreoffice.py --throughput-only`, its
   own TensorFlow 2.13 venv, created on first use): a fresh model trained for
   `--peer-minutes`; its figure is the mean of its own `tokens/s` log lines
   (every 10 steps) after the first line (which holds its tracing);
2. kseq (`bench_onmt_config.py`) at each of `--precisions`: `--steps` timed
   steps on 4,096-token batches after one untimed step per bucket shape.

Both count real (non-pad) source + target tokens per second. The sides use
the same configuration (Transformer 3+3, d 256, ff 1024, 4 heads, shared 8k
vocabulary, dropout 0.1, label smoothing 0.1, Adam, 4,096-token batches); kseq's
buckets are `--boundaries`. The result holds every round, the medians, and
kseq / OpenNMT-tf per precision; a bf16 row is an extra (the peer trains in
float32), never the headline. Prints JSON.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

kseq and OpenNMT-tf 2.32 on OpenNMT-tf's configuration, **same machine, same hour**,
alternated in fresh processes (`bench_onmt_same_hour.py --rounds 3 --peer-minutes 6 --steps
30`, AVX-512 CPU with `amx_bf16`, load average 0.7–2.4 at each start;
`results/bench_onmt_same_hour.json`): real source + target tokens/s per round, OpenNMT-tf
(float32, its own `tokens/s` log over 6 minutes from a fresh model) 5,351 / 5,131 / 4,697;
kseq float32 5,193 / 4,568 / 5,085; kseq `--precision mixed_bfloat16` 6,307 / 6,782 / 7,111.
Medians: kseq float32 **0.99×** OpenNMT-tf, kseq bf16 **1.32×**. XLA does not pay on this
CPU either: `bench_onmt_config.py --jit` (one run each, the same session,
`results/bench_onmt_config_jit_{float32,mixed_bfloat16}.json`) gave 4,871 tokens/s in
float32 and 4,492 in bf16, below both runs without it: under XLA bf16 loses its gain
entirely (why was not examined). The peer has no reduced-precision mode on a CPU (its
`--mixed_precision` turns itself off without an NVIDIA GPU), so the float32 row is the like-
for-like one. Where the step goes (`experiments/onmt_step_parts.py`, same CPU, 12 batches):
float32 1.27 s a step = encoder + decoder forward 0.36, tied projection + loss 0.19,
backward 0.66, FusedAdam + metrics 0.06; dropout (0.1 at every site) 0.15 of it; bf16 0.96 s
(forward 0.33, projection + loss 0.18, backward 0.45). The 2048² matmul here runs at 323
GFLOP/s in float32 and 1,033 in bf16 (AMX); the step does 155 GFLOP over real tokens, so
float32 reaches 122 GFLOP/s (**0.38** of the matmul) and bf16 162 (0.16 of its own): the
forward hardly gets faster in bf16 (0.36 → 0.33 s for ~38 GFLOP, 37 ms of bf16 matmul), so
the step is bound by the small ops around the matmuls (attention's per-head score matmuls,
softmax and masks over short buckets, layer norms, dropout masks, casts), not by arithmetic
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

import harness  # benchmarks/harness.py

FINE_BOUNDARIES = "8,12,16,20,24,28,32,40,48,64,96"


def run_json(command, log, threads=None):
    """Runs `command` with `--json PATH` added and returns the JSON it wrote. `threads`:
    TensorFlow's intra- and inter-op threads in the child (both sides' TensorFlow reads
    the same two variables)."""
    env = dict(os.environ)
    if threads:
        env.update(TF_NUM_INTRAOP_THREADS=str(threads), TF_NUM_INTEROP_THREADS=str(threads))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "result.json")
        with open(log, "a", encoding="utf-8") as handle:
            completed = subprocess.run([*command, "--json", path], stdout=handle,
                                       stderr=subprocess.STDOUT, env=env)
        if completed.returncode != 0:
            raise SystemExit(f"{os.path.basename(command[1])} failed "
                             f"(exit {completed.returncode}); see {log}")
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)


def peer_side(args, log):
    script = os.path.join(harness.FOLDER, "experiments", "peer_opennmt_libreoffice.py")
    command = [sys.executable, script, "--throughput-only", "--minutes", str(args.peer_minutes),
               "--output", os.path.join(args.output, "peer")]
    if args.peer_venv:
        command += ["--venv", args.peer_venv]
    return lambda: run_json(command, log, args.threads)["training"][
        "source_plus_target_tokens_per_second"]


def kseq_side(args, precision, log):
    command = [sys.executable, os.path.join(harness.FOLDER, "bench_onmt_config.py"),
               "--steps", str(args.steps), "--boundaries", args.boundaries,
               "--precision", precision, "--seed", str(args.seed)]
    return lambda: run_json(command, log, args.threads)["real_tokens_per_second"]


def summary(rounds, peer="opennmt_tf"):
    """Medians per side and each kseq side over the peer's median.

    >>> summary({"opennmt_tf": [2000, 2100, 1900], "kseq_float32": [2600, 2500, 2700]})
    {'median_tokens_per_second': {'opennmt_tf': 2000, 'kseq_float32': 2600}, 'ratio_over_opennmt_tf': {'kseq_float32': 1.3}}
    """
    medians = {name: statistics.median(values) for name, values in rounds.items()}
    return {"median_tokens_per_second": medians,
            "ratio_over_opennmt_tf": {name: harness.ratio(value, medians[peer], 3)
                                      for name, value in medians.items() if name != peer}}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer-minutes", type=float, default=6.0,
                        help="OpenNMT-tf's wall clock per round (start-up included)")
    parser.add_argument("--steps", type=int, default=30, help="kseq's timed steps per round")
    parser.add_argument("--boundaries", default=FINE_BOUNDARIES, help="kseq's bucket boundaries")
    parser.add_argument("--precisions", default="float32,mixed_bfloat16",
                        help="kseq's precisions, comma-separated")
    parser.add_argument("--peer-venv", help="OpenNMT-tf's venv (default: the peer script's)")
    parser.add_argument("--output", default=os.path.join("runs", "onmt_same_hour"),
                        help="working folder (the peer's data and model, the log)")
    args = harness.parse(parser, argv, keras=False)  # --threads: also each child's
    if args.smoke:
        args.rounds, args.peer_minutes, args.steps = 1, 1.0, 2
    os.makedirs(args.output, exist_ok=True)
    log = os.path.join(args.output, "log.txt")
    sides = {"opennmt_tf": peer_side(args, log)}
    for precision in args.precisions.split(","):
        sides[f"kseq_{precision}"] = kseq_side(args, precision, log)
    loads = []  # the load average as each side starts: a busy machine slows that side

    def recorded(call):
        return lambda: (loads.append(harness.load_average()), call())[1]

    figures = harness.alternated({name: recorded(call) for name, call in sides.items()},
                                 args.rounds)
    result = {"configuration": "Transformer 3+3, d_model 256, ff 1024, 4 heads, shared 8k "
                               "vocabulary, dropout 0.1, 4,096-token batches",
              "peer": "OpenNMT-tf 2.32.0 (TensorFlow 2.13.1), float32",
              "kseq_boundaries": args.boundaries, "peer_minutes": args.peer_minutes,
              "kseq_timed_steps": args.steps, "rounds": figures["rounds"],
              "load_average_at_each_start": loads,
              **summary(figures["rounds"])}
    harness.write("bench_onmt_same_hour", result, args)
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
