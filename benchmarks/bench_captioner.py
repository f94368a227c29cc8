"""Decoding speed of a captioner: kseq's search against keras-hub's samplers and the keras.io loop.

    .venv/bin/python benchmarks/bench_captioner.py [--model runs/quality_shapes_captions]

One captioner (the `shapes_captioner` preset's architecture: SmallCnn 64 px +
Transformer decoder 2 x d96; trained weights with `--model`, else random) and
batches of 64 drawn scenes. Captions per second, median of 3 timed calls after
one warm-up call, for:

- **kseq**: `compiled_search` (one `tf.function`, no XLA) greedy and beam 4;
- **keras-hub**: `GreedySampler` / `BeamSampler(num_beams=4)` in a
  `tf.function`, driving the same model's cached `step` (KV cache, cross K/V
  computed once): the same work per token, keras-hub's search loop;
- **keras.io's "Image Captioning" loop as written**: the whole model once per
  output token over the padded prefix, one image at a time, eagerly (16 images).

Every search runs the full `max_length` (kseq: `min_length = max_length`;
keras-hub: no stop token), so the work is the same whatever the weights say.
Prints JSON with the ratios; record the CPU flags with the figures.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

Decoding speed of the same architecture at batch
64, 11 tokens a caption (`benchmarks/bench_captioner.py`, every search run to full length):

| captions / s | greedy | beam 4 |
|---|---|---|
| kseq (`compiled_search`, no XLA) | 1,214 | 813 |
| keras-hub `GreedySampler` / `BeamSampler` over the same cached step | 1,119 | 213 |
| keras.io "Image Captioning" loop as written (whole model per token, one image at a time) | 2.6 | — |

Against the anchors: keras.io's example decodes greedily in an eager loop that re-runs the
whole prefix per token (465× slower here) and never stops (its end-token check never
matches); TensorFlow's tutorial samples one image at a time; neither has beam search, BLEU
or an export. kseq's beam search returns the best alive beam when none finishes, and the
exported model takes image bytes and runs decoding, search and detokenisation in the graph.
"""

import time

import harness  # benchmarks/harness.py, before TensorFlow
import numpy as np
import tensorflow as tf

BATCH = 64


def timed(fn, *args, repeats=3):
    """Median seconds of `fn(*args)` over `repeats` calls after one tracing call."""
    return harness.median_seconds(lambda: fn(*args), repeats)[1]


def kseq_speed(model, images, length, repeats):
    result = {}
    for name, beam in (("greedy", 1), ("beam4", 4)):
        settings = model.search_settings(beam_size=beam, max_length=length, min_length=length,
                                         length_penalty=None)
        seconds = timed(model.compiled_search(settings), images, repeats=repeats)
        result[name] = round(len(images) / seconds, 1)
    return result


def keras_hub_speed(model, images, length, repeats):
    import keras_hub

    batch = images.shape[0]

    def next_fn(prompt, cache, index):
        logits, state = model.step(prompt[:, index - 1], cache["state"], cache["memory"],
                                   index - 1)
        return logits, None, {"state": state, "memory": cache["memory"]}

    prompt = tf.concat([tf.fill([batch, 1], 2), tf.zeros([batch, length], tf.int32)], 1)
    result = {}
    for name, sampler in (("greedy", keras_hub.samplers.GreedySampler()),
                          ("beam4", keras_hub.samplers.BeamSampler(num_beams=4))):
        def run(pixels, sampler=sampler):
            memory = model.encode(pixels)
            cache = {"state": model.initial_state(memory), "memory": memory}
            return sampler(next_fn, prompt, cache=cache, index=1)

        seconds = timed(tf.function(run), images, repeats=repeats)
        result[name] = round(batch / seconds, 1)
    return result


def keras_io_speed(model, images, length):
    """The keras.io loop: the full model per token over the padded prefix, one image a time."""
    started = time.perf_counter()
    for pixels in images:  # eager, as the example runs
        decoded = [2]
        for _ in range(length):
            prefix = np.array([decoded + [0] * (length - len(decoded))], "int32")
            logits = model({"images": pixels[None], "decoder_ids": tf.constant(prefix)})
            decoded.append(int(np.argmax(logits[0, len(decoded) - 1])))
    return round(len(images) / (time.perf_counter() - started), 2)


def main(argv=None):
    import kseq
    from kseq.data.datasets.shapes_captions import shapes_captions

    parser = harness.arguments(__doc__, repeats=3)
    parser.add_argument("--model", help="a trained run folder (default: random weights)")
    args = harness.parse(parser, argv)
    batch = 4 if args.smoke else BATCH
    data = shapes_captions(train_size=batch, valid_size=0, test_size=0, image_size=64, seed=3)
    if args.model:
        model = kseq.training.load_trained(args.model)
    else:
        model = kseq.zoo.captioner("shapes_captioner", load_weights=False,
                                   train_data=data["train"])
    images = model.preprocessor.images(tf.constant([i for i, _ in data["train"]]))[0]
    length = 3 if args.smoke else model.max_target_length - 1
    ours = kseq_speed(model, images, length, args.repeats)
    peer = keras_hub_speed(model, images, length, args.repeats)
    result = {
        "model": args.model or "shapes_captioner recipe, random weights",
        "parameters": model.count_params(), "batch": batch, "tokens_per_caption": length,
        "captions_per_second": {"kseq": ours, "keras_hub_samplers": peer,
                                "keras_io_loop_greedy": keras_io_speed(
                                    model, images[:1 if args.smoke else 16], length)},
        "ratios_kseq_over_keras_hub": {k: harness.ratio(ours[k], peer[k]) for k in ours},
    }
    result["ratio_kseq_greedy_over_keras_io_loop"] = round(
        ours["greedy"] / result["captions_per_second"]["keras_io_loop_greedy"], 1)
    harness.write("bench_captioner", result, args)
    return result


if __name__ == "__main__":
    main()
