"""Search speed on a small random step function: sentences/s at beam 4, batch 64.

Compares greedy and beam search, with and without XLA, against a peer in the
same run: keras-hub's `BeamSampler` driven by the same step function (as a
ratio). Prints JSON.

    .venv/bin/python benchmarks/bench_search.py [--batch 64] [--beam 4] [--steps 40]

Measured (the method notes docs/results.md held; its table keeps the headline figures):

beam 4, batch 64, 40 steps, V 8,000, random step (`bench_search.py`): 72 sentences/s without
XLA, 83 with XLA (first call 1.3 s / 1.9 s); 1.15× keras-hub `BeamSampler` on the same step

greedy, same setting: 373 sentences/s without XLA, 457 with
"""

import harness  # benchmarks/harness.py, before TensorFlow
import tensorflow as tf

from kseq.decoding import beam_search, greedy_search


def random_step(vocab, width, seed=0):
    """A small recurrent step: state h [N, E] -> logits [N, V]; never emits the end token."""
    rng = tf.random.Generator.from_seed(seed)
    embed = tf.Variable(rng.normal([vocab, width]) * 0.3)
    recur = tf.Variable(rng.normal([width, width]) * 0.3)
    out = tf.Variable(rng.normal([width, vocab]) * 0.3)
    no_end = tf.one_hot(3, vocab) * -1e9  # forces full-length outputs: fair timing

    def step(tokens, state, memory, t):
        h = tf.tanh(tf.gather(embed, tokens) + state["h"] @ recur)
        return h @ out + no_end, {"h": h}

    return step


def time_call(fn, *args, repeats=5):
    """`(first call seconds: compile / trace, median seconds of `repeats` more calls)`."""
    return harness.median_seconds(lambda: fn(*args), repeats)


def main(argv=None):
    parser = harness.arguments(__doc__, repeats=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--width", type=int, default=256)
    args = harness.parse(parser, argv)
    if args.smoke:
        args.batch, args.steps, args.vocab, args.width = 2, 3, 32, 8
    step = random_step(args.vocab, args.width)
    state = {"h": tf.zeros([args.batch, args.width])}
    start = tf.fill([args.batch], 2)
    results = {"batch": args.batch, "beam": args.beam, "max_length": args.steps,
               "vocab": args.vocab, "width": args.width}
    searches = {
        "greedy": lambda s: greedy_search(step, {"h": state["h"]}, {}, s,
                                          max_length=args.steps, end_id=3),
        "beam": lambda s: beam_search(step, {"h": state["h"]}, {}, s, beam_size=args.beam,
                                      max_length=args.steps, end_id=3, early_stop=False),
    }
    for name, search in searches.items():
        for xla in (False, True):
            fn = tf.function(search, jit_compile=xla or None)
            compile_s, seconds = time_call(fn, start, repeats=args.repeats)
            results[f"{name}_{'xla' if xla else 'graph'}"] = {
                "sentences_per_second": round(args.batch / seconds, 1),
                "seconds_per_batch": round(seconds, 4),
                "first_call_seconds": round(compile_s, 2),
            }
    results["peer"] = keras_hub_beam(step, args)
    ours = results["beam_graph"]["sentences_per_second"]
    results["ratio_beam_graph_vs_keras_hub"] = harness.ratio(
        ours, results["peer"]["sentences_per_second"])
    harness.write("bench_search", results, args)
    return results


def keras_hub_beam(step, args):
    """keras-hub's BeamSampler on the same step, compiled with tf.function (no XLA)."""
    import keras_hub

    sampler = keras_hub.samplers.BeamSampler(num_beams=args.beam)
    vocab = args.vocab
    width = args.width

    def next_fn(prompt, cache, index):
        tokens = prompt[:, index - 1]
        logits, new = step(tokens, {"h": cache}, {}, index)
        return logits, None, new["h"]

    @tf.function
    def run(prompt):
        cache = tf.zeros([args.batch, width])
        return sampler(next_fn, prompt, cache=cache, index=1)

    prompt = tf.concat([tf.fill([args.batch, 1], 2),
                        tf.zeros([args.batch, args.steps], tf.int32)], axis=1)
    compile_s, seconds = time_call(run, prompt, repeats=args.repeats)
    return {"name": "keras_hub.samplers.BeamSampler", "sentences_per_second":
            round(args.batch / seconds, 1), "seconds_per_batch": round(seconds, 4),
            "first_call_seconds": round(compile_s, 2), "vocab": vocab}


if __name__ == "__main__":
    main()
