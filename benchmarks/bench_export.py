"""Serving speed of an exported SavedModel on CPU, after warm-up (beam 4).

Exports the shipped `numbers_fr_transformer` preset (or `--model`), loads the
SavedModel with plain TensorFlow + tensorflow-text, and measures latency p50/p99
for one sentence and throughput for a batch of 64, against the same search run
through `Translator.translate` in the same process (a ratio). Shape policy:
the exported signature takes any batch and length (no padding to buckets), so
each new input shape retraces nothing but the SavedModel's graph runs as is.
Prints JSON and writes `benchmarks/results/bench_export.json`.

    .venv/bin/python benchmarks/bench_export.py

Measured (the method notes docs/results.md held; its table keeps the headline figures):

SavedModel serving, beam 4, the zoo numbers model (`bench_export.py`): one sentence p50 13
ms, p99 25 ms; batch of 64: 308 sentences/s; export 6.8 MB
"""

import os
import tempfile
import time

import harness  # benchmarks/harness.py, before TensorFlow
import keras
import numpy as np
import tensorflow as tf

import kseq


def folder_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def percentile_ms(times, q):
    return round(float(np.percentile(times, q)) * 1000, 2)


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--model", default=os.path.join(
        harness.ROOT, "kseq", "presets", "numbers_fr_transformer.keras"))
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--single", type=int, default=100, help="one-sentence requests timed")
    parser.add_argument("--batches", type=int, default=5, help="batches of 64 timed")
    args = harness.parse(parser, argv)
    if args.smoke:
        args.beam, args.single, args.batches = 1, 2, 1
    model = keras.saving.load_model(args.model)
    sentences = [s for s, _ in kseq.data.numbers_dataset("fr", 0, 0, 64, seed=1)["test"]]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "translator", "1")
        model.export(path, beam_size=args.beam)
        size = folder_size(path)
        serve = tf.saved_model.load(path).signatures["serving_default"]
        for sentence in sentences[:8]:  # warm-up
            serve(text=tf.constant([sentence]))
        serve(text=tf.constant(sentences))
        single = []
        for i in range(args.single):
            started = time.perf_counter()
            serve(text=tf.constant([sentences[i % 64]]))["text"].numpy()
            single.append(time.perf_counter() - started)
        batch_times = []
        for _ in range(args.batches):
            started = time.perf_counter()
            serve(text=tf.constant(sentences))["text"].numpy()
            batch_times.append(time.perf_counter() - started)
    model.translate(sentences, beam_size=args.beam)  # warm-up of the Python path
    python_times = []
    for _ in range(args.batches):
        started = time.perf_counter()
        model.translate(sentences, beam_size=args.beam)
        python_times.append(time.perf_counter() - started)
    result = {
        "model": args.model, "beam": args.beam, "parameters": model.count_params(),
        "export_bytes": size,
        "single_sentence_latency_ms": {"p50": percentile_ms(single, 50),
                                       "p99": percentile_ms(single, 99)},
        "batch64_sentences_per_second": round(64 / float(np.median(batch_times)), 1),
        "translate_batch64_sentences_per_second": round(64 / float(np.median(python_times)), 1),
        "shape_policy": "any [B] strings; search over [B, S] ids without bucket padding",
    }
    result["ratio_savedmodel_vs_translate"] = round(
        result["batch64_sentences_per_second"] / result["translate_batch64_sentences_per_second"], 2)
    harness.write("bench_export", result, args)
    return result


if __name__ == "__main__":
    main()
