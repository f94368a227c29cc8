"""Input pipeline speed: kseq.training's epoch-ordered stream vs the shuffle-buffer stream.

`kseq.training.train` reads its batches from an `ExampleTable` in a stateless
per-epoch permutation (so a resumed run continues the data exactly); before,
it read `TranslatorPreprocessor.training_dataset` (a 20k shuffle buffer).
Both bucket the same 20,000 numbers pairs into 4,096-token batches. Prints
JSON: real label tokens per second of one epoch for each, their ratio, and the
one-off cost of building the table and counting its batches. Usage:

    .venv/bin/python benchmarks/bench_epoch_order_pipeline.py > benchmarks/results/bench_epoch_order_pipeline.json
"""
import json, time, tensorflow as tf, kseq
from kseq.data.pipeline.bucketing import bucket_by_length, filter_by_length
from kseq.data.pipeline.epoch_order import ExampleTable, count_batches, epoch_ordered_batches
splits = kseq.data.numbers_dataset("fr", train_size=20000, valid_size=10, test_size=10)
tok = kseq.text.WordTokenizer.build_vocabulary([s for s, _ in splits["train"]])
tgt = kseq.text.WordTokenizer.build_vocabulary([t for _, t in splits["train"]])
pre = kseq.models.TranslatorPreprocessor(tok, tgt, 32, 32)
boundaries = [8, 16, 24, 32]
def rate(ds):
    start = time.perf_counter(); n = 0
    for f, l in ds:
        n += int(tf.reduce_sum(tf.cast(l > 0, tf.int32)))
    return n / (time.perf_counter() - start)
old = pre.training_dataset(splits["train"], boundaries, token_budget=4096)
start = time.perf_counter()
table = ExampleTable(pre.tokenized(splits["train"]).apply(filter_by_length(32)))
batcher = bucket_by_length(boundaries, token_budget=4096)
n = count_batches(table, batcher)
setup = time.perf_counter() - start
new = epoch_ordered_batches(table, batcher, 0, (0, 1))
flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
old_rate, new_rate = rate(old), rate(new)
print(json.dumps({
    "cpu_flags": sorted(f for f in flags if f.startswith(("avx", "amx", "fma"))),
    "batches_per_epoch": n, "setup_seconds_table_and_count": round(setup, 2),
    "shuffle_buffer_real_label_tokens_per_second": round(old_rate),
    "epoch_ordered_real_label_tokens_per_second": round(new_rate),
    "ratio_epoch_ordered_over_shuffle_buffer": round(new_rate / old_rate, 2)}, indent=2))
