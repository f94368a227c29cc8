"""Start-up time of the `kseq` command against `python -c "import tensorflow"` in the same run.

`kseq --help`, `kseq train --help`, `kseq --version` and `kseq presets` import no
TensorFlow (issue 31 aims at under 1 s); before, every command loaded it first
(3-7 s on a busy 2-core machine). Each command runs in a fresh process
(`python -m kseq.cli ...`, which the package treats as the console script), in
rounds alternated with the peer, `python -c "import tensorflow"`, and with
`python -c "import kseq"` (the whole package: what every command cost before).
Prints JSON: the median seconds of each, each command's ratio to the peer, and
whether each command stayed under 1 s and never imported TensorFlow. Usage:

    .venv/bin/python benchmarks/bench_cli_startup.py   # -> results/bench_cli_startup.json

Measured (the method notes docs/results.md held; its table keeps the headline figures):

start-up of the `kseq` command, fresh processes, 5 alternated rounds
(`bench_cli_startup.py`, AVX-512 CPU, load average 5 on 2 cores): `kseq --help` 0.07 s,
`train --help` 0.08 s, `--version` 0.10 s, `presets` 0.13 s (none imports TensorFlow)
against 9.5 s for `python -c "import tensorflow"` in the same run (0.7–1.4%); before, every
command imported the whole package first (`import kseq` 10.6 s in that run; `kseq --help`
4.9–10 s measured alternately with the new code)
"""
import subprocess
import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow

COMMANDS = {"help": ["--help"], "train_help": ["train", "--help"], "version": ["--version"],
            "presets": ["presets"]}
PEERS = {"import_tensorflow": ["-c", "import tensorflow"], "import_kseq": ["-c", "import kseq"]}


def seconds(arguments):
    """Wall seconds of one fresh `python ARGUMENTS` process (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *arguments], capture_output=True, cwd=harness.ROOT)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"python {' '.join(arguments)} failed: {done.stderr[-1000:]!r}")
    return elapsed


def imports_tensorflow(arguments):
    """Whether `python -X importtime ARGUMENTS` imports the `tensorflow` package."""
    done = subprocess.run([sys.executable, "-X", "importtime", *arguments], capture_output=True,
                          text=True, cwd=harness.ROOT)
    modules = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}  # one line per module imported
    return "tensorflow" in modules


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternated rounds of every command and peer (median reported)")
    args = harness.parse(parser, argv, keras=False)
    rounds = 1 if args.smoke else args.rounds
    sides = {name: (lambda a=["-m", "kseq.cli", *command]: seconds(a))
             for name, command in COMMANDS.items()}
    peers = {"import_tensorflow": PEERS["import_tensorflow"]} if args.smoke else PEERS
    sides.update({name: (lambda a=arguments: seconds(a)) for name, arguments in peers.items()})
    timed = harness.alternated(sides, rounds)
    median = {name: round(value, 3) for name, value in timed["median"].items()}
    peer = median["import_tensorflow"]
    result = {
        "rounds": rounds, "median_seconds": median,
        "ratio_to_import_tensorflow": {name: harness.ratio(median[name], peer, 3)
                                       for name in COMMANDS},
        "ratio_import_kseq_to_import_tensorflow": harness.ratio(median.get("import_kseq", 0),
                                                                peer, 3),
        "under_1_s": {name: median[name] < 1.0 for name in COMMANDS},
        "imports_tensorflow": {name: imports_tensorflow(["-m", "kseq.cli", *command])
                               for name, command in COMMANDS.items()},
    }
    harness.write("bench_cli_startup", result, args)
    return result


if __name__ == "__main__":
    main()
