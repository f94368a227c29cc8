"""Input pipeline speed: kseq.training's epoch-ordered stream vs the shuffle-buffer stream.

`kseq.training.train` reads its batches from an `ExampleTable` in a stateless
per-epoch permutation (so a resumed run continues the data exactly); before,
it read `TranslatorPreprocessor.training_dataset` (a 20k shuffle buffer).
Both bucket the same 20,000 numbers pairs into 4,096-token batches. Prints
JSON: real label tokens per second of one epoch for each, their ratio, and the
one-off cost of building the table and counting its batches. Usage:

    .venv/bin/python benchmarks/bench_epoch_order_pipeline.py   # -> results/bench_epoch_order_pipeline.json
"""
import time

import harness  # benchmarks/harness.py, before TensorFlow
import tensorflow as tf

import kseq
from kseq.data.pipeline.bucketing import bucket_by_length, filter_by_length
from kseq.data.pipeline.epoch_order import ExampleTable, count_batches, epoch_ordered_batches

BOUNDARIES = [8, 16, 24, 32]


def rate(dataset):
    """Real (non-pad) label tokens per second of one pass over `dataset`."""
    started, tokens = time.perf_counter(), 0
    for _, labels in dataset:
        tokens += int(tf.reduce_sum(tf.cast(labels > 0, tf.int32)))
    return tokens / (time.perf_counter() - started)


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--pairs", type=int, default=20000, help="numbers training pairs")
    args = harness.parse(parser, argv)
    pairs = 200 if args.smoke else args.pairs
    splits = kseq.data.numbers_dataset("fr", train_size=pairs, valid_size=10, test_size=10)
    source = kseq.text.WordTokenizer.build_vocabulary([s for s, _ in splits["train"]])
    target = kseq.text.WordTokenizer.build_vocabulary([t for _, t in splits["train"]])
    preprocessor = kseq.models.TranslatorPreprocessor(source, target, 32, 32)
    old = preprocessor.training_dataset(splits["train"], BOUNDARIES, token_budget=4096)
    started = time.perf_counter()
    table = ExampleTable(preprocessor.tokenized(splits["train"]).apply(filter_by_length(32)))
    batcher = bucket_by_length(BOUNDARIES, token_budget=4096)
    batches = count_batches(table, batcher)
    setup = time.perf_counter() - started
    new = epoch_ordered_batches(table, batcher, 0, (0, 1))
    old_rate, new_rate = rate(old), rate(new)
    result = {
        "pairs": pairs, "batches_per_epoch": batches,
        "setup_seconds_table_and_count": round(setup, 2),
        "shuffle_buffer_real_label_tokens_per_second": round(old_rate),
        "epoch_ordered_real_label_tokens_per_second": round(new_rate),
        "ratio_epoch_ordered_over_shuffle_buffer": harness.ratio(new_rate, old_rate)}
    harness.write("bench_epoch_order_pipeline", result, args)
    return result


if __name__ == "__main__":
    main()
