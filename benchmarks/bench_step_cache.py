"""Is the KV cache real? Decoding step time at t=35 against t=5.

A Translator (1+1 layers, d 256, ff 2048, 8 heads, vocabulary 15,000) runs its
compiled `step` for 64 rows at several positions. With a fixed-size cache the
cost does not grow with t (a model that re-ran the prefix would take ~7x at
t=35). Prints JSON.

    .venv/bin/python benchmarks/bench_step_cache.py
"""

import harness  # benchmarks/harness.py, before TensorFlow
import numpy as np
import tensorflow as tf

import kseq


def main(argv=None):
    parser = harness.arguments(__doc__, repeats=30)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--source-length", type=int, default=20)
    args = harness.parse(parser, argv)
    batch, source_length, repeats = args.batch, args.source_length, args.repeats
    vocab, width, ff, heads = (200, 16, 32, 2) if args.smoke else (15000, 256, 2048, 8)
    batch = 4 if args.smoke else batch
    vocabulary = list(kseq.text.RESERVED_TOKENS) + [f"w{i}" for i in range(vocab - 4)]
    tokenizer = kseq.text.WordTokenizer(vocabulary)
    model = kseq.models.build_translator("transformer", tokenizer, tokenizer, num_layers=1,
                                         num_heads=heads, hidden_dim=width, intermediate_dim=ff,
                                         max_source_length=64, max_target_length=64)
    source = tf.constant(np.random.default_rng(0).integers(4, vocab, (batch, source_length)),
                         tf.int32)
    memory = model.encode(source)
    state = model.initial_state(memory)
    step = tf.function(model.step)
    tokens = tf.fill([batch], 5)
    results = {}
    for t in (5, 35):
        position = tf.constant(t)
        # one warm-up call (tracing: the position is a tensor, so once), then the median
        _, seconds = harness.median_seconds(lambda: step(tokens, state, memory, position)[0],
                                            repeats)
        results[f"step_ms_t{t}"] = round(seconds * 1000, 3)
    results["ratio_t35_over_t5"] = round(results["step_ms_t35"] / results["step_ms_t5"], 3)
    results["batch"] = batch
    results["cache_length"] = model.max_target_length
    harness.write("bench_step_cache", results, args)
    return results


if __name__ == "__main__":
    main()
