"""Input pipeline speed: kseq.training's token-store stream vs the shuffle-buffer stream.

`kseq.training.train` tokenises its training split once into a `TokenStore`
(shards on disk) and reads each epoch from it in a seeded order, so a resumed
run continues the data exactly and memory does not grow with the corpus. The
peer is `TranslatorPreprocessor.training_dataset` (tokenised in memory, a 20k
shuffle buffer). Both bucket the same numbers pairs into 4,096-token batches.
Prints JSON: real label tokens per second of one epoch for each, their ratio,
and the one-off cost of preparing the corpus and the store. Usage:

    .venv/bin/python benchmarks/bench_token_store_pipeline.py   # -> results/bench_token_store_pipeline.json

Measured (the method notes docs/results.md held; its table keeps the headline figures):

input pipeline of `kseq train`, 20,000 numbers pairs, 4,096-token buckets
(`bench_token_store_pipeline.py`, AMX CPU, machine loaded by a test run): the token-store
stream (tokenised once to shards on disk, read in a seeded order per epoch; bounded memory
at any corpus size): 35,815 real label tokens/s = 0.52× the in-memory shuffle-buffer stream
(69,233), still ~25× a model's training rate here; 3.6 s to prepare and tokenise once
"""
import os
import tempfile
import time

import harness  # benchmarks/harness.py, before TensorFlow
import tensorflow as tf

import kseq
from kseq.data.corpus.corpus_preparation import CorpusRow, prepare_corpus
from kseq.data.corpus.prepared_corpus import PreparedCorpus
from kseq.data.corpus.token_store import TokenStore
from kseq.data.pipeline.bucketing import bucket_by_length, filter_by_length

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
    folder = tempfile.mkdtemp(prefix="kseq-bench-store-")
    started = time.perf_counter()
    rows = (CorpusRow("numbers", n, s, t, "train") for n, (s, t) in enumerate(splits["train"]))
    prepare_corpus(rows, os.path.join(folder, "corpus"), report=lambda line: None)
    corpus = PreparedCorpus(os.path.join(folder, "corpus"))
    store = TokenStore.build(os.path.join(folder, "tokens"),
                             preprocessor.tokenized_batches(corpus.dataset("train")),
                             expected=corpus.size("train"))
    setup = time.perf_counter() - started
    batcher = bucket_by_length(BOUNDARIES, token_budget=4096)
    new = store.epoch(seed=0, epoch=0).apply(filter_by_length(32)).apply(batcher)
    old_rate, new_rate = rate(old), rate(new)
    result = {
        "pairs": pairs, "examples_in_store": store.size,
        "setup_seconds_prepare_and_tokenise": round(setup, 2),
        "shuffle_buffer_real_label_tokens_per_second": round(old_rate),
        "token_store_real_label_tokens_per_second": round(new_rate),
        "ratio_token_store_over_shuffle_buffer": harness.ratio(new_rate, old_rate)}
    harness.write("bench_token_store_pipeline", result, args)
    return result


if __name__ == "__main__":
    main()
