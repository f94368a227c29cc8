"""`make demo`: the zoo's shipped LibreOffice translator, its export, then a short training.

1. Loads the `libreoffice_en_fr_transformer` preset's shipped weights (SHA-256
   checked) and translates LibreOffice-style English sentences into French.
2. Scores greedy BLEU / chrF on the committed 200-paragraph test slice
   (`kseq/presets/slices/`, MPL-2.0 text: no apt needed) next to its card's figure.
3. Exports it in TF Serving's layout and queries the export in a fresh process
   that never imports kseq (as TF Serving would run it).
4. Trains the `numbers_fr_transformer` recipe for `KSEQ_DEMO_MINUTES` (default 2)
   and scores exact match, BLEU and chrF on 1,000 unseen numbers.

The demo runs itself in a child process and prints the child's output as it
comes, with TensorFlow's and absl's own log lines removed line by line (the
absl pre-init warning, the `port.cc` / `cudart_stub.cc` / `cuda_platform.cc`
start-up lines, which an environment variable cannot silence: the lines the
`kseq` command drops); every other line, warnings included, is shown. The
launcher itself imports no TensorFlow, so it prints nothing of its own.
`KSEQ_DEMO_FAST=1` runs the same path at tiny
size (the smoke test): greedy search throughout (one traced search per model),
a greedy export, and a numbers run on a little data in one length bucket;
`KSEQ_DEMO_OUTPUT` sets the output folder.
"""

import os
import subprocess
import sys
import time

from kseq.cli.stderr_filter import is_tensorflow_line  # imports no TensorFlow

PRESET = "libreoffice_en_fr_transformer"
SENTENCES = ["Click the Save button to save the current document.",
             "Choose Format - Cells and select the Numbers tab.",
             "This function returns the number of characters in a text string.",
             "You can insert a chart into a spreadsheet."]
QUERY = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops, as TF Serving links them
served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = served(text=tf.constant(json.loads(sys.argv[2])))
print(json.dumps({"kseq imported": "kseq" in sys.modules,
                  "text": [row[0].decode() for row in out["text"].numpy()]}))
"""


def say(message):
    print(message, flush=True)


def translate_with_the_preset(fast):
    from kseq import zoo

    started = time.perf_counter()
    model = zoo.translator(PRESET)
    say(f"[1/4] loaded preset {PRESET} ({model.count_params():,} parameters, weights "
        f"SHA-256 checked) in {time.perf_counter() - started:.0f} s; English -> French:")
    # Fast: greedy, the search step 2 scores with (one trace of the 7.5M-parameter model).
    translations = model.translate(SENTENCES[:2], beam_size=1) if fast else \
        model.translate(SENTENCES)
    for source, target in zip(SENTENCES, translations):
        say(f"  {source}\n    -> {target}")
    return model


def score_the_slice(model, fast):
    from kseq.presets.catalog import preset_recipe, slice_pairs

    entry = preset_recipe(PRESET)["weights"]["slice_200"]
    pairs = slice_pairs(PRESET)
    pairs = pairs[:20] if fast else pairs
    started = time.perf_counter()
    result = model.evaluate(pairs, beam_size=1)  # an EvaluationResult: BLEU, chrF, ...
    say(f"[2/4] greedy on {len(pairs)} committed test paragraphs: BLEU {result['bleu']:.1f}, "
        f"chrF {result['chrf']:.1f} in {time.perf_counter() - started:.0f} s (the card, on "
        f"all 200: BLEU {entry['greedy_bleu']}, chrF {entry['greedy_chrf']})\n"
        f"  signature: {result['bleu_signature']}")


def export_and_query(model, output, fast):
    import json

    from kseq.export import export_to_serving_layout

    started = time.perf_counter()
    version_dir = export_to_serving_layout(model, os.path.join(output, "export"), "translator",
                                           beam_size=1 if fast else 4)
    say(f"[3/4] exported {version_dir} (TF Serving layout, models.config beside it) in "
        f"{time.perf_counter() - started:.0f} s; querying it in a fresh process:")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-c", QUERY, version_dir, json.dumps(SENTENCES[:2])],
                          capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"the export did not answer: {done.stderr[-2000:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    say(f"  kseq imported in that process: {answer['kseq imported']}")
    for source, target in zip(SENTENCES, answer["text"]):
        say(f"  {source}\n    -> {target}")


# Fast: a little data in one length bucket (one traced train step), four validation numbers.
FAST_TRAINING = {"data": {"train_size": 64, "valid_size": 4},
                 "training": {"epochs": 1, "boundaries": [32], "bleu_subset": 4}}


def train_numbers(fast, output):
    from kseq.training import train

    preset = "numbers_fr_tiny" if fast else "numbers_fr_transformer"
    minutes = float(os.environ.get("KSEQ_DEMO_MINUTES", "0.5" if fast else "2"))
    folder = os.path.join(output, f"train-{preset}")
    say(f"[4/4] training the {preset} recipe for at most {minutes:g} min -> {folder}")
    started = time.perf_counter()
    model, splits, _ = train(preset, folder, minutes=minutes or None, verbose=2,
                             overrides=FAST_TRAINING if fast else None)
    say(f"  trained in {time.perf_counter() - started:.0f} s")
    test = splits["test"][: 40 if fast else 1000]
    searches = [("greedy", 1)] if fast else [("greedy", 1), ("beam 4", 4)]
    for name, beam in searches:
        result = model.evaluate(test, beam_size=beam)
        say(f"  {name:7s} on {len(test)} unseen numbers: exact match "
            f"{result['exact_match']:.3f}  BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}")
    new_inputs = ["seven hundred and seventy-seven", "twelve thousand and five"]
    translations = model.translate(new_inputs, beam_size=1 if fast else 4)
    for source, target in zip(new_inputs, translations):
        say(f"  {source} -> {target}")


def child():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # What `import kseq` does elsewhere (`python -m kseq.demo` skips it): every room, so
    # every kseq class is registered with Keras.
    from kseq import data, decoding, layers, metrics, models, text, zoo  # noqa: F401
    fast = os.environ.get("KSEQ_DEMO_FAST") == "1"
    output = os.environ.get("KSEQ_DEMO_OUTPUT", os.path.join("runs", "demo"))
    model = translate_with_the_preset(fast)
    score_the_slice(model, fast)
    export_and_query(model, output, fast)
    train_numbers(fast, output)
    return 0


def _exit_now(code):
    """Ends the child at once: everything is printed and written, and TensorFlow's
    interpreter teardown would only add seconds (10 or more on 2 cores) of silence."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    """Runs the demo in a child process, passing its output on without TensorFlow's noise."""
    if "--child" in sys.argv:
        _exit_now(child())
    print("kseq demo: the shipped LibreOffice translator, its export, then a short training",
          flush=True)
    # The level silences what TensorFlow logs after start-up; the lines absl prints before
    # its logging is initialised ignore it, so they are filtered here.
    env = {"TF_CPP_MIN_LOG_LEVEL": "2", **os.environ}
    process = subprocess.Popen([sys.executable, "-u", "-m", "kseq.demo", "--child"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               bufsize=1, env=env)
    for line in process.stdout:
        if not is_tensorflow_line(line):  # TensorFlow's and absl's own lines
            sys.stdout.write(line)
            sys.stdout.flush()
    return process.wait()


if __name__ == "__main__":
    sys.exit(main())
