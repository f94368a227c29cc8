"""Is the KV cache real? Decoding step time at t=35 against t=5.

A Translator (1+1 layers, d 256, ff 2048, 8 heads, vocabulary 15,000) runs its
compiled `step` for 64 rows at several positions. With a fixed-size cache the
cost does not grow with t (a model that re-ran the prefix would take ~7x at
t=35). Prints JSON.

    .venv/bin/python benchmarks/bench_step_cache.py
"""

import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import kseq  # noqa: E402


def main(batch=64, source_length=20, repeats=30):
    vocabulary = list(kseq.text.RESERVED_TOKENS) + [f"w{i}" for i in range(15000 - 4)]
    tokenizer = kseq.text.WordTokenizer(vocabulary)
    model = kseq.models.build_translator("transformer", tokenizer, tokenizer, num_layers=1,
                                         num_heads=8, hidden_dim=256, intermediate_dim=2048,
                                         max_source_length=64, max_target_length=64)
    source = tf.constant(np.random.default_rng(0).integers(4, 15000, (batch, source_length)),
                         tf.int32)
    memory = model.encode(source)
    state = model.initial_state(memory)
    step = tf.function(model.step)
    tokens = tf.fill([batch], 5)
    results = {}
    for t in (5, 35):
        position = tf.constant(t)
        step(tokens, state, memory, position)  # trace once per position value is avoided:
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            logits, _ = step(tokens, state, memory, position)
            logits.numpy()
            times.append(time.perf_counter() - started)
        results[f"step_ms_t{t}"] = round(float(np.median(times)) * 1000, 3)
    results["ratio_t35_over_t5"] = round(results["step_ms_t35"] / results["step_ms_t5"], 3)
    results["batch"] = batch
    results["cache_length"] = model.max_target_length
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
