#!/usr/bin/env bash
# The accelerator check of issue #30: does kseq train, decode and export on this machine, and how fast?
#
#   benchmarks/accelerator_check.sh                 # on a GPU machine (about 8 minutes)
#   benchmarks/accelerator_check.sh --cpu --tiny    # the smoke check (well under a minute)
#
# Steps:
#   1. installs kseq (this checkout, extras data,plot,test) into a fresh venv under --work
#      (skipped with --cpu or --python: the given / current interpreter is used);
#   2. lists the visible devices;
#   3. trains the recipe (libreoffice_en_fr_transformer; --tiny: numbers_fr_tiny) for --steps
#      optimizer steps under each precision (float32, mixed_bfloat16, mixed_float16), each
#      without and with XLA, through kseq.training.train(..., strategy="auto"), and prints
#      real target tokens/s, the median step time and the peak device memory (on a CPU: the
#      process's peak resident memory);
#   4. decodes the preset's 200-paragraph slice (the shipped libreoffice_en_fr_transformer
#      weights; --tiny: 16 test sentences with the model just trained) greedy and beam 4,
#      sentences/s;
#   5. runs the export test (tests/export/test_export.py; --tiny: one greedy export, reloaded
#      and run in a fresh process without kseq).
# One JSON line per step goes to stdout (`{"check": ...}`); the last line is the summary.
#
# Options:
#   --cpu          hide every GPU and skip the fresh-venv install (the smoke check)
#   --tiny         the tiny recipe, 6 steps, float32 and mixed_bfloat16 only, no XLA pair
#   --steps N      optimizer steps per precision (default 60; --tiny: 6)
#   --python PY    use this interpreter instead of a fresh venv
#   --work DIR     scratch folder (default: a new temporary folder, removed at the end)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CPU=0; TINY=0; STEPS=""; PY=""; WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) CPU=1 ;;
    --tiny) TINY=1 ;;
    --steps) STEPS="$2"; shift ;;
    --python) PY="$2"; shift ;;
    --work) WORK="$2"; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "accelerator_check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$WORK" ]; then
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/kseq-accelerator-XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
export TF_CPP_MIN_LOG_LEVEL=2
[ "$CPU" = 1 ] && export CUDA_VISIBLE_DEVICES=""

started=$(date +%s)
if [ -z "$PY" ] && [ "$CPU" = 1 ]; then
  PY="$(command -v python3)"
  [ -x "$ROOT/.venv/bin/python" ] && PY="$ROOT/.venv/bin/python"
fi
if [ -z "$PY" ]; then  # a fresh venv: what a new user gets from `pip install kseq`
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install --quiet --upgrade pip
  "$WORK/venv/bin/pip" install --quiet "$ROOT[data,plot,test]"
  PY="$WORK/venv/bin/python"
  echo "{\"check\": \"install\", \"seconds\": $(( $(date +%s) - started ))}"
fi

cd "$WORK"  # the installed package, not the checkout's folder, unless --cpu/--python
"$PY" - "$TINY" "${STEPS:-}" "$WORK" "$ROOT" <<'PYTHON'
import json, os, resource, statistics, subprocess, sys, tempfile, time

tiny, steps, work, root = sys.argv[1] == "1", sys.argv[2], sys.argv[3], sys.argv[4]
steps = int(steps) if steps else (6 if tiny else 60)
import keras
import tensorflow as tf
import kseq
from kseq.training import train

def say(check, **fields):
    print(json.dumps({"check": check, **fields}), flush=True)

gpus = tf.config.list_physical_devices("GPU")
say("devices", devices=[d.name for d in tf.config.list_physical_devices()],
    tensorflow=tf.__version__, keras=keras.__version__, kseq=kseq.__version__)

class StepClock(keras.callbacks.Callback):
    """Times each train batch; stops after `steps` optimizer steps."""
    def __init__(self, steps):
        super().__init__()
        self.steps, self.times = steps, []
    def on_train_batch_begin(self, batch, logs=None):
        self.began = time.perf_counter()
    def on_train_batch_end(self, batch, logs=None):
        float(logs["loss"])  # waits for the step
        self.times.append(time.perf_counter() - self.began)
        if len(self.times) >= self.steps:
            self.model.stop_training = True

def peak_memory_mb():
    if gpus:
        return round(tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # CPU: peak RSS

recipe = "numbers_fr_tiny" if tiny else "libreoffice_en_fr_transformer"
overrides = {"data": {"train_size": 256, "valid_size": 0, "test_size": 16}} if tiny else None
precisions = ["float32", "mixed_bfloat16"] if tiny else ["float32", "mixed_bfloat16",
                                                         "mixed_float16"]
runs, model, splits, real_tokens = [], None, None, None
for precision in precisions:
    for xla in ([False] if tiny else [False, True]):
        if gpus:
            tf.config.experimental.reset_memory_stats("GPU:0")
        clock = StepClock(steps)
        output = tempfile.mkdtemp(dir=work, prefix=f"train-{precision}-{int(xla)}-")
        model, splits, _ = train(recipe, output, epochs=1000, verbose=0, overrides=overrides,
                                 strategy="auto", precision=precision, jit_compile=xla,
                                 save_every_steps=10**6, extra_callbacks=[clock])
        if real_tokens is None:  # every target token of an epoch (padding excluded)
            real_tokens = sum(int(tf.math.count_nonzero(y)) for _, y in
                              model.preprocessor.tokenized(splits["train"]))
        timed = clock.times[2:] or clock.times  # the first steps trace (and compile)
        step_s = statistics.median(timed)
        tokens_per_step = real_tokens / clock.params["steps"]  # params: batches per epoch
        run = {"precision": precision, "jit_compile": xla, "steps": len(clock.times),
               "step_seconds": round(step_s, 4), "first_step_seconds": round(clock.times[0], 2),
               "real_tokens_per_second": round(tokens_per_step / step_s, 1),
               "peak_memory_mb": peak_memory_mb(),
               "peak_memory_kind": "device" if gpus else "process RSS"}
        say("train", **run)
        runs.append(run)

# Decoding: the shipped preset on its slice, or the tiny model on its test split.
if tiny:
    decoder, sources = model, [s for s, _ in splits["test"][:16]]
else:
    from kseq.presets import load_preset_model, slice_pairs
    decoder = load_preset_model("libreoffice_en_fr_transformer")
    sources = [s for s, _ in slice_pairs("libreoffice_en_fr_transformer")]
decoding = {}
for beam in (1, 4):
    decoder.translate(sources[:4], beam_size=beam)  # traces the search
    began = time.perf_counter()
    decoder.translate(sources, beam_size=beam, batch_size=64)
    decoding[f"beam_{beam}"] = round(len(sources) / (time.perf_counter() - began), 2)
say("decode", sentences=len(sources), sentences_per_second=decoding)

# Export: the repository's export test, or (tiny) one export run in a fresh process.
began = time.perf_counter()
if tiny:
    folder = os.path.join(work, "export", "1")
    # Greedy: the export traces its search once per endpoint (two), and a beam search
    # traces ~2x longer; tests/export/ checks beam exports (the full run runs them).
    model.export(folder, beam_size=1)
    child = ("import os, sys, tensorflow as tf, tensorflow_text\n"
             "served = tf.saved_model.load(sys.argv[1]).signatures['serving_default']\n"
             "out = served(tf.constant(sys.argv[2:]))\n"
             "assert 'kseq' not in sys.modules and out['text'].shape[0] == len(sys.argv) - 2\n"
             "print(out['text'].shape, flush=True)\n"
             "os._exit(0)  # checked and printed: TensorFlow's teardown (seconds) checks nothing")
    done = subprocess.run([sys.executable, "-c", child, folder] + sources[:2],
                          capture_output=True, text=True)
else:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           os.path.join(root, "tests", "export", "test_export.py")],
                          capture_output=True, text=True, cwd=root)
say("export", ok=done.returncode == 0, seconds=round(time.perf_counter() - began, 1),
    tail=done.stdout.strip().splitlines()[-1:] + done.stderr.strip().splitlines()[-2:]
    if done.returncode else done.stdout.strip().splitlines()[-1:])
say("summary", ok=done.returncode == 0, recipe=recipe, gpus=len(gpus), train=runs,
    decode=decoding)
code = 0 if done.returncode == 0 else 1
if tiny:  # every line is out: TensorFlow's interpreter teardown (1.5-4 s) checks nothing
    sys.stdout.flush()
    os._exit(code)
sys.exit(code)
PYTHON
echo "{\"check\": \"done\", \"seconds\": $(( $(date +%s) - started ))}"
