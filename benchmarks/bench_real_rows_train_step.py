"""kseq's real-rows train step against Keras's own step on the same model: seconds per step.

    .venv/bin/python benchmarks/bench_real_rows_train_step.py [--steps 11] [--json out.json]
    .venv/bin/python benchmarks/bench_real_rows_train_step.py --tiny   # seconds: what the test runs

The model is `bench_translator.py`'s (1+1 layers, d 256, ff 2048, V 15,000,
batch 64, keras-hub's layout); two copies with the same initial weights, one
training with kseq's step (output projection on real target rows only), the
other with `keras.Model.train_step` (projection on every row). Both see the
same batches, interleaved step by step, so a drift of the machine's speed
hits both alike: identical padding to 24 tokens (few real labels) and one of
kseq's length buckets (16 tokens, most labels real). The first batch of each
shape is untimed (tracing). Prints JSON: median seconds per step and the ratio.
"""

import os
import statistics
import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow


def timed_pair(models, batches):
    """Median seconds per step of each model over `batches[1:]` (the first one traces)."""
    for model in models.values():
        src, dec, lab = batches[0]
        model.train_on_batch({"source_ids": src, "decoder_ids": dec}, lab)
    times = {name: [] for name in models}
    for src, dec, lab in batches[1:]:
        for name, model in models.items():
            started = time.perf_counter()
            model.train_on_batch({"source_ids": src, "decoder_ids": dec}, lab)
            times[name].append(time.perf_counter() - started)
    return {name: round(statistics.median(values), 4) for name, values in times.items()}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--steps", type=int, default=11, help="batches per setting (first untimed)")
    parser.add_argument("--tiny", action="store_true", help="bench_translator's tiny size")
    args = harness.parse(parser, argv)
    if args.smoke:
        args.tiny, args.steps = True, min(args.steps, 3)

    import keras
    import numpy as np

    import translator_setup as bench

    size = bench.SIZES["tiny" if args.tiny else "default"]
    tokenizer, data, _ = bench.build_data(size)
    models = {}
    for name in ("kseq_real_rows", "keras_all_rows"):
        keras.utils.set_random_seed(0)
        models[name] = bench.kseq_model(tokenizer, size)
    plain = models["keras_all_rows"]
    plain.train_step = lambda batch: keras.Model.train_step(plain, batch)
    settings = {
        "same_padding_24": list(bench.padded_batches(data["train"], size["batch"],
                                                     size["max_source"], np)),
        "bucket_16": [b for b in bench.bucketed_batches(data["train"], size["batch"], np)
                      if b[0].shape[1] == 16],
    }
    result = {}
    for label, batches in settings.items():
        batches = batches[: args.steps]
        seconds = timed_pair(models, batches)
        result[label] = {
            "real_label_share": round(float(np.mean([(b[2] > 0).mean() for b in batches])), 3),
            "seconds_per_step": seconds,
            "ratio_keras_over_kseq": round(seconds["keras_all_rows"] / seconds["kseq_real_rows"],
                                           2),
        }
    harness.write("bench_real_rows_train_step", result, args)
    return 0


if __name__ == "__main__":
    code = main()
    if {"--tiny", "--smoke"} & set(sys.argv):
        # The result is written: TensorFlow's interpreter teardown (~1.5 s) checks nothing.
        sys.stdout.flush()
        os._exit(code)
    sys.exit(code)
