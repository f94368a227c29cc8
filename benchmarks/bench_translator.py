"""kseq's Transformer translator against the strongest keras-hub build of the same model.

    .venv/bin/python benchmarks/bench_translator.py              # defaults of issue #7
    .venv/bin/python benchmarks/bench_translator.py --tiny       # seconds: what the test runs

Each side runs in its own child process (so `ru_maxrss` is its peak memory),
on the same `numbers` data and the same token ids:

- **kseq**: `kseq.models.Translator`, post-LN, learned positions, no shared
  embeddings (so both sides have the same parameters), in keras-hub's layout
  (no `√E` embedding scale, no dropout on the embeddings or after the
  feed-forward activation: the peer's function), its one-loop searches.
- **peer**: `keras_hub.layers.TokenAndPositionEmbedding`, `TransformerEncoder`,
  `TransformerDecoder` and a `Dense` head; decoding with keras-hub's
  `GreedySampler` / `BeamSampler` in a `tf.function`, with the decoder's
  self-attention cache, the cross-attention keys/values computed once, and the
  encoder output repeated per beam (keras-hub #1047).
- **reference row**: the keras.io "English-to-Spanish translation with
  KerasHub" decoding as written there: no cache, the whole model called once
  per output token, one sentence at a time.

Both sides train the same number of steps (loss reported, so neither wins by
being broken). Training throughput counts real (non-pad) source + target
tokens per second; "same padding" feeds both sides identical batches,
"natural" gives kseq its length buckets (8, 12, 16, 20, 24) and pads the peer
to the example's fixed length. Decoding is timed on 64 sentences at a forced
output length (no end token) and with the trained models' natural end tokens
(each row reports its mean output length: natural rows compare engines only
when both models end their sentences alike, hence the shared layout and 120
training steps: with kseq's default layout, loss 0.295 against the peer's
0.053 at step 120, one test sentence never ended). kseq's searches
run as a `tf.function` like the peer's, and again under XLA (`*_xla` rows, one
compilation each, its time in `first_call_seconds`); both are over the peer's
`tf.function` rows, since XLA made the peer's samplers ~18x slower here
(`--peer-xla` times its greedy sampler so). fp32 both sides.
Trace / compile time is reported apart from throughput. A reported extra, not
a headline ratio: kseq's natural batches again under XLA (each bucket shape
compiled once before the clock starts; compilations and seconds reported).
Training efficiency (FLOP/s over real tokens / a 2048² matmul's FLOP/s) is
given for each of kseq's three training runs. `--bf16` adds kseq under
`mixed_bfloat16` (a fresh model: a few natural training steps and forced greedy
decoding, over kseq's fp32 figures, with the CPU's bf16 flags). Prints JSON.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

kseq / keras-hub Transformer, 1+1 layers, d 256, ff 2048, 8 heads, V 15,000, batch 64, 14.4M
params each, the same layout (no √E scale, keras-hub's dropout sites), both trained 120
steps to loss 0.060 / 0.053 (`bench_translator.py`; medians of three idle runs,
`results/bench_translator_run{1,2,3}.json`, table by `bench_translator_summary.py`):
training real tokens/s: 1.66× with identical padding, 3.19× natural (kseq's buckets
8/12/16/20/24 vs the keras.io example's pad-to-40); decoding 64 sentences, kseq as a
`tf.function` like the peer / kseq under XLA (one compilation per search, 4–8 s, excluded):
greedy forced length 40 1.10× / **1.60×**, greedy natural end 1.38× / **1.63×** (both sides'
mean output length 10.0), beam 4 forced 4.21× / 6.09×, beam 4 natural end 4.90× / 6.94×;
peak RSS 0.90×; kseq's beam 4 is 59× the keras.io example's uncached greedy loop (its greedy
288×)

kseq training FLOP/s over real tokens vs a 2048² fp32 matmul in the same run: natural
batches: median 0.55 (0.58, 0.50, 0.55; 46 GFLOP/s against a matmul measured at 79–92);
identical padding (40% real slots): 0.38; natural under XLA: 0.50 — XLA does not pay for
this 1+1-layer model (formula in the JSON: 6 × weights met per real token)

Both models are built in keras-hub's layout (`Translator(scale_embeddings=False,
embedding_dropout=0.0, activation_dropout=0.0)`) so that they train the same function the same
way: with kseq's default layout (√E-scaled embeddings, two more dropout sites) and the bench's
constant Adam 1e-3 without warm-up, kseq's model reached loss 0.295 against the peer's 0.053
after 120 steps and one test sentence never ended, so "natural" greedy compared models, not
search engines (0.57× then). Greedy without XLA is bounded by work both sides share: per step
at batch 64, the `[64, 256] × [256, 15000]` projection (~5 ms) and the score/argmax passes over
`[64, 15000]`, then ~100 small ops of the 1+1-layer decoder step, which XLA fuses — hence
1.10–1.56× as a `tf.function` and 1.4–2.0× under XLA across the runs (the two sides run in
turn in separate processes, and this machine's speed drifts by ±20% between them). The
peer's samplers compiled with XLA (`--peer-xla`) ran ~18× *slower* here (greedy 4.7
sentences/s), so every ratio is over the peer's `tf.function`. `--bf16` adds kseq under
`mixed_bfloat16` as an extra: this CPU has no bf16 instructions (`avx512_bf16`/`amx_bf16`
absent), so bf16 is emulated and slower: natural training 0.92× kseq's fp32, forced greedy 0.63×
(`results/bench_translator_bf16.json`, a fourth run).
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow
from translator_setup import (EXAMPLE_LENGTH, SIZES, bucketed_batches,  # noqa: F401
                              build_data, flops_per_token, kseq_model, matmul_flops,
                              padded_batches, prebuilt, real_tokens)

# The smoke run (--smoke / --tiny): the same code path with less of each. One timed
# repeat per search, two step calls per position, the keras.io loop cut at the forced
# length, a 512² matmul; the parent runs both sides itself, kseq's first (so its peak
# memory is still kseq's alone; the peer's is then both sides', a figure the smoke run
# only reports): no second process to start (TensorFlow and keras-hub, ~6 s). Two of
# the four searches on each side (each a trace of seconds): greedy and beam, one
# natural and one forced, so both searches and both stopping modes still run.
SMOKE = dict(repeats=1, step_calls=2, example_tokens=SIZES["tiny"]["forced_length"],
             matmul_size=512, matmul_calls=2, searches=("greedy_natural", "beam4_forced"))


def searched(size, name):
    """Whether a run of `size` times search `name` ("greedy_forced", ...): all four but
    in the smoke run."""
    return name in size.get("searches", (name,))


def size_for(tiny):
    """The sizes of a run: issue #7's, or the tiny ones with the smoke run's counts."""
    return dict(SIZES["tiny"], **SMOKE) if tiny else SIZES["default"]

# === Shared data: the same ids for both sides; kseq's model (translator_setup.py) ===


def peer_model(size):
    """The keras-hub model as the keras.io example builds it, plus the parts decoding needs."""
    import keras
    import keras_hub

    kh = keras_hub.layers
    source = keras.Input((None,), dtype="int32", name="source_ids")
    target = keras.Input((None,), dtype="int32", name="decoder_ids")
    source_embedding = kh.TokenAndPositionEmbedding(size["vocab"], EXAMPLE_LENGTH + 8,
                                                    size["width"], mask_zero=True)
    target_embedding = kh.TokenAndPositionEmbedding(size["vocab"], EXAMPLE_LENGTH + 8,
                                                    size["width"], mask_zero=True)
    encoders = [kh.TransformerEncoder(size["ff"], size["heads"], dropout=0.1)
                for _ in range(size["layers"])]
    decoders = [kh.TransformerDecoder(size["ff"], size["heads"], dropout=0.1)
                for _ in range(size["layers"])]
    head = keras.layers.Dense(size["vocab"])
    x = source_embedding(source)
    for encoder in encoders:
        x = encoder(x)
    y = target_embedding(target)
    for decoder in decoders:
        y = decoder(y, x)
    model = keras.Model({"source_ids": source, "decoder_ids": target}, head(y))
    from kseq.metrics import MaskedSparseCrossEntropy

    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=MaskedSparseCrossEntropy(0.0),
                  jit_compile=False)
    model.parts = dict(source_embedding=source_embedding, target_embedding=target_embedding,
                       encoders=encoders, decoders=decoders, head=head)
    return prebuilt(model, size)


# === Timing ===

def train_and_time(model, batches, train_steps, timed_steps):
    """Trains `train_steps` batches; times the last `timed_steps` (the first traces)."""
    losses, tokens, started, traced = [], 0, None, None
    t0 = time.perf_counter()
    seen_shapes = set()
    for index, batch in enumerate(batches[:train_steps]):
        if batch[0].shape not in seen_shapes:  # first batch of a new shape: a trace
            seen_shapes.add(batch[0].shape)
        if index == train_steps - timed_steps:
            traced = time.perf_counter() - t0
            started = time.perf_counter()
        src, dec, lab = batch
        logs = model.train_on_batch({"source_ids": src, "decoder_ids": dec}, lab,
                                    return_dict=True)
        losses.append(float(logs["loss"]))
        if started is not None:
            tokens += real_tokens(batch)
    seconds = time.perf_counter() - started
    return {"tokens_per_second": round(tokens / seconds), "timed_steps": timed_steps,
            "seconds_per_step": round(seconds / timed_steps, 4),
            "warmup_seconds_incl_traces": round(traced, 1), "shapes": len(seen_shapes),
            "first_loss": round(losses[0], 3), "last_loss": round(losses[-1], 3)}


def train_warm_and_time(model, batches, steps):
    """Trains `steps` batches: the first of each shape untimed (its trace / XLA
    compilation is reported), then the rest timed. Both sides train `steps`."""
    firsts = {}
    for batch in batches[:steps]:
        firsts.setdefault(batch[0].shape, batch)
    warm = list(firsts.values())
    # Tiny runs can meet a new shape at every step: then the warm batches are timed again.
    timed = [b for b in batches[:steps] if all(b is not w for w in warm)] or warm
    started = time.perf_counter()
    for src, dec, lab in warm:
        model.train_on_batch({"source_ids": src, "decoder_ids": dec}, lab)
    warm_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for src, dec, lab in timed:
        logs = model.train_on_batch({"source_ids": src, "decoder_ids": dec}, lab,
                                    return_dict=True)
    seconds = time.perf_counter() - started
    tokens = sum(map(real_tokens, timed))
    return {"tokens_per_second": round(tokens / seconds),
            "timed_steps": len(timed), "seconds_per_step": round(seconds / len(timed), 4),
            "shapes": len(firsts), "warmup_seconds_incl_traces": round(warm_seconds, 1),
            "real_share_of_padded": round(tokens / sum(b[0].size + b[2].size for b in timed), 3),
            "last_loss": round(float(logs["loss"]), 3)}


def train_xla_and_time(model, batches, timed_steps):
    """The same, after recompiling the train step with XLA (one compilation per shape)."""
    model.compile(optimizer=model.optimizer, loss=model.loss, jit_compile=True)
    return train_warm_and_time(model, batches, timed_steps)


def time_fn(fn, *args, repeats=3):
    """`(first call seconds, median of the next `repeats`, last output)`."""
    started = time.perf_counter()
    fn(*args)
    first = time.perf_counter() - started
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        out = fn(*args)
        _ = [x.numpy() for x in (out if isinstance(out, (tuple, list)) else [out])]
        times.append(time.perf_counter() - started)
    return first, sorted(times)[len(times) // 2], out


def kseq_decoding(model, source, size):
    """Sentences/s of each search, as a `tf.function` (like the peer) and under XLA."""
    import numpy as np
    import tensorflow as tf

    result = {}
    for xla in (False, True):
        for name, beam in (("greedy", 1), ("beam4", 4)):
            for mode, min_length in (("forced", size["forced_length"]), ("natural", 0)):
                key = f"{name}_{mode}" + ("_xla" if xla else "")
                if xla and f"{name}_{mode}" not in size.get("xla_searches", (f"{name}_{mode}",)):
                    continue
                if not searched(size, f"{name}_{mode}"):
                    continue
                settings = model.search_settings(beam_size=beam, max_length=size["forced_length"],
                                                 min_length=min_length, length_penalty=None)
                fn = model.compiled_search(settings, xla=xla)
                first, seconds, (_, _, lengths) = time_fn(fn, tf.constant(source),
                                                          repeats=size.get("repeats", 3))
                result[key] = {"sentences_per_second": round(len(source) / seconds, 1),
                               "first_call_seconds": round(first, 2)}
                if mode == "natural":
                    result[key]["mean_output_length"] = round(float(np.mean(lengths[:, 0])), 1)
    # One XLA compilation per search (fixed batch and source shape); its time is
    # the first call's, reported above and kept out of the throughput.
    result["xla_compilations"] = sum(key.endswith("_xla") for key in result)
    memory = model.encode(tf.constant(source))
    state = model.initial_state(memory)
    step = tf.function(model.step)
    tokens = tf.fill([len(source)], 5)
    timings, calls = {}, size.get("step_calls", 20)
    for t in (5, 35):
        position = tf.constant(min(t, model.max_target_length - 1))
        step(tokens, state, memory, position)
        started = time.perf_counter()
        for _ in range(calls):
            logits, _ = step(tokens, state, memory, position)
        logits.numpy()
        timings[t] = (time.perf_counter() - started) / calls
    result["step_time_t35_over_t5"] = round(timings[35] / timings[5], 2)
    return result


def peer_decoding(model, source, size, xla=False):
    """keras-hub samplers over a cached step: self-attention cache, cross K/V once.

    `xla=True` compiles each sampler with `jit_compile` (an extra, `--peer-xla`).
    """
    import keras_hub
    import tensorflow as tf
    from keras import ops

    p = model.parts
    batch, length = len(source), size["forced_length"] + 1
    heads, key_dim = size["heads"], size["width"] // size["heads"]

    def encode(src):
        x = p["source_embedding"](src)
        for encoder in p["encoders"]:
            x = encoder(x, padding_mask=src > 0)
        return x

    def make_next():
        def next_fn(prompt, cache, index):
            token = prompt[:, index - 1: index]
            y = p["target_embedding"](token, start_index=index - 1)
            new_self, new_cross = [], []
            for i, decoder in enumerate(p["decoders"]):
                y, self_cache, cross_cache = decoder(
                    y, cache["encoded"], encoder_padding_mask=cache["source_mask"],
                    self_attention_cache=cache["self"][i],
                    self_attention_cache_update_index=index - 1,
                    cross_attention_cache=cache["cross"][i],
                    cross_attention_cache_update_index=None)
                new_self.append(self_cache)
                new_cross.append(cross_cache)
            logits = p["head"](y)[:, 0]
            cache = dict(cache, self=new_self, cross=new_cross)
            return logits, None, cache
        return next_fn

    def initial_cache(src):
        encoded = encode(src)
        mask = src > 0
        empty = ops.zeros([batch, 2, length, heads, key_dim])
        first = p["target_embedding"](tf.fill([batch, 1], 2))
        cross = []
        for decoder in p["decoders"]:  # cross K/V computed once, reused every step
            _, _, c = decoder(first, encoded, encoder_padding_mask=mask,
                              self_attention_cache=empty, self_attention_cache_update_index=0,
                              cross_attention_cache=ops.zeros([batch, 2, src.shape[1], heads,
                                                               key_dim]),
                              cross_attention_cache_update_index=0)
            cross.append(c)
        return {"encoded": encoded, "source_mask": mask, "self": [empty] * len(p["decoders"]),
                "cross": cross}

    prompt = tf.concat([tf.fill([batch, 1], 2), tf.zeros([batch, length - 1], tf.int32)], 1)
    result = {}
    samplers = {"greedy": keras_hub.samplers.GreedySampler(),
                "beam4": keras_hub.samplers.BeamSampler(num_beams=4)}
    if xla:  # under XLA the peer's beam search ran at ~1 sentence/s here: greedy only
        del samplers["beam4"]
    for name, sampler in samplers.items():
        for mode, stop in (("forced", None), ("natural", [3])):
            if not searched(size, f"{name}_{mode}"):
                continue

            def run(src, sampler=sampler, stop=stop):
                cache = initial_cache(src)
                return sampler(make_next(), prompt, cache=cache, index=1,
                               stop_token_ids=stop)

            run = tf.function(run, jit_compile=xla or None)
            first, seconds, token_ids = time_fn(run, tf.constant(source),
                                                repeats=size.get("repeats", 3))
            result[f"{name}_{mode}"] = {"sentences_per_second": round(batch / seconds, 1),
                                        "first_call_seconds": round(first, 2)}
            if stop:
                result[f"{name}_{mode}"]["mean_output_length"] = mean_length(token_ids)
    if not xla:
        result["keras_io_example_greedy"] = keras_io_decoding(
            model, source[: size["example_sentences"]],
            size.get("example_tokens", EXAMPLE_LENGTH))
    return result


def mean_length(token_ids):
    """Mean generated length of sampler output `[B, 1 + T]`: up to and with the end id 3."""
    import numpy as np

    generated = np.asarray(token_ids)[:, 1:]
    ends = [list(row).index(3) + 1 if 3 in row else len(row) for row in generated]
    return round(float(np.mean(ends)), 1)


def keras_io_decoding(model, source, max_tokens=EXAMPLE_LENGTH):
    """The keras.io example's loop: the whole model per output token, one sentence at a time
    (at most `max_tokens` tokens: the example's length; fewer in the smoke run)."""
    import numpy as np

    started = time.perf_counter()
    for row in source:
        decoded = [2]
        for _ in range(max_tokens):
            target = np.array([decoded + [0] * (EXAMPLE_LENGTH - len(decoded))], "int32")
            logits = model({"source_ids": np.array([row]), "decoder_ids": target})
            token = int(np.argmax(logits[0, len(decoded) - 1]))
            decoded.append(token)
            if token == 3:
                break
    return {"sentences_per_second": round(len(source) / (time.perf_counter() - started), 2),
            "sentences": len(source)}


# === One side, in its own process ===

def bf16_extra(tokenizer, natural, source, size):
    """kseq trained and decoded under `mixed_bfloat16` (a reported extra, never a headline).

    A fresh model; its own few natural steps are timed after one warm batch per
    shape. Whether the CPU has native bf16 matmuls (`avx512_bf16` / `amx_bf16`)
    is reported with it: without them, bf16 math is emulated.
    """
    import tensorflow as tf

    model = kseq_model(tokenizer, size, dtype="mixed_bfloat16")
    steps = max(2, size["timed_steps"] // 3)
    result = {"train_natural": train_warm_and_time(model, natural, steps)}
    settings = model.search_settings(beam_size=1, max_length=size["forced_length"],
                                     min_length=size["forced_length"], length_penalty=None)
    first, seconds, _ = time_fn(model.compiled_search(settings), tf.constant(source),
                                repeats=size.get("repeats", 3))
    result["greedy_forced"] = {"sentences_per_second": round(len(source) / seconds, 1),
                               "first_call_seconds": round(first, 2)}
    result["cpu_bf16_flags"] = [f for f in harness.cpu_flags() if "bf16" in f]
    return result


def run_side(side, size, peer_xla=False, bf16=False, built=None):
    """One side's figures. `built`: `build_data(size)` already made (the smoke run builds
    it once for both sides, in one process; a child builds its own)."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    tokenizer, data, np = built or build_data(size)
    same = []
    for epoch in range(math.ceil(size["train_steps"] / (len(data["train"][0]) // size["batch"]))):
        same += padded_batches(data["train"], size["batch"], size["max_source"], np, epoch)
    if side == "kseq":
        model = kseq_model(tokenizer, size)
        natural = bucketed_batches(data["train"], size["batch"], np)
    else:
        model = peer_model(size)
        natural = list(padded_batches(data["train"], size["batch"], EXAMPLE_LENGTH, np))
    result = {"parameters": model.count_params(),
              "train_same_padding": train_and_time(model, same, size["train_steps"],
                                                   size["timed_steps"])}
    result["train_natural"] = train_warm_and_time(model, natural, size["timed_steps"] + 2)
    test_sources = data["test"][0][: size["batch"]]
    source = np.zeros([len(test_sources), size["max_source"]], "int32")
    for r, s in enumerate(test_sources):
        source[r, : len(s)] = s
    decode = kseq_decoding if side == "kseq" else peer_decoding
    result["decoding"] = decode(model, source, size)
    if side == "kseq":
        result["flops_per_real_token"] = flops_per_token(size)
    result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if side == "peer" and peer_xla:
        result["decoding_xla"] = peer_decoding(model, source, size, xla=True)
    if side == "kseq":
        # A reported extra, run last: its steps would otherwise train the model
        # that is decoded, and XLA compilation would raise the peak memory.
        xla_batches = natural
        if size.get("xla_train_one_shape"):  # smoke: one XLA compilation is the check
            xla_batches = [b for b in natural if b[0].shape == natural[0][0].shape]
        result["train_natural_xla"] = train_xla_and_time(model, xla_batches,
                                                         size["timed_steps"] + 2)
    if side == "kseq" and bf16:
        result["bf16"] = bf16_extra(tokenizer, natural, source, size)
    result["threads"] = {"intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
                         "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
                         "cpus": os.cpu_count()}
    return result


def efficiency(timing, flops_per_token, limit):
    """Training GFLOP/s over real tokens, and its fraction of the matmul limit."""
    achieved = timing["tokens_per_second"] * flops_per_token
    return {"kseq_train_gflops": round(achieved / 1e9, 1),
            "fraction_of_matmul": round(achieved / limit, 3)}


ratio = harness.ratio


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--tiny", action="store_true", help="the tiny size (as --smoke)")
    parser.add_argument("--side", choices=["kseq", "peer"], help=argparse.SUPPRESS)
    parser.add_argument("--peer-xla", action="store_true",
                        help="also time the peer's greedy sampler under XLA (slow extra)")
    parser.add_argument("--bf16", action="store_true",
                        help="also train and decode kseq under mixed_bfloat16 (extra)")
    args = harness.parse(parser, argv)
    args.tiny = args.tiny or args.smoke
    size = size_for(args.tiny)
    if args.side:
        print(json.dumps(run_side(args.side, size, args.peer_xla, args.bf16)))
        return 0
    sides = {}
    built = build_data(size) if args.tiny else None  # the same ids for both sides
    for side in ("kseq", "peer"):
        if args.tiny:  # in this process (kseq first); a round trip through JSON, as from a child
            sides[side] = json.loads(json.dumps(run_side(side, size, args.peer_xla and
                                                         side == "peer", args.bf16, built)))
            continue
        command = [sys.executable, os.path.abspath(__file__), "--side", side]
        command += (["--tiny"] if args.tiny else []) + (["--peer-xla"] if args.peer_xla else [])
        command += ["--bf16"] if args.bf16 and side == "kseq" else []
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{side} side failed:\n{done.stderr[-3000:]}")
        sides[side] = json.loads(done.stdout.strip().splitlines()[-1])
    ours, peer = sides["kseq"], sides["peer"]
    peer_decoded = peer["decoding"]
    limit = matmul_flops(size.get("matmul_size", 2048), size.get("matmul_calls", 10))
    timed = ours["train_same_padding"]
    flops = ours["flops_per_real_token"]
    per_token = (flops["source"] + flops["target"]) / 2  # source and target counts are close
    result = {
        "size": size, "kseq": ours, "peer": peer,
        "ratios_kseq_over_peer": {
            "train_same_padding_tokens_per_second": ratio(
                timed["tokens_per_second"], peer["train_same_padding"]["tokens_per_second"]),
            "train_natural_tokens_per_second": ratio(
                ours["train_natural"]["tokens_per_second"],
                peer["train_natural"]["tokens_per_second"]),
            # kseq's XLA rows are over the peer's tf.function rows: under XLA the
            # peer's samplers were 18x slower here (see --peer-xla).
            **{f"decode_{k}": ratio(v["sentences_per_second"],
                                    peer_decoded[k.removesuffix("_xla")]["sentences_per_second"])
               for k, v in ours["decoding"].items() if isinstance(v, dict)},
            **{f"decode_{search}_natural_vs_keras_io_example": ratio(
                ours["decoding"][f"{search}_natural"]["sentences_per_second"],
                peer["decoding"]["keras_io_example_greedy"]["sentences_per_second"])
               for search in ("greedy", "beam4")  # the example only decodes greedily
               if f"{search}_natural" in ours["decoding"]},  # the smoke run: greedy only
            "peak_rss": ratio(ours["peak_rss_mib"], peer["peak_rss_mib"]),
        },
        "extra_kseq_natural_xla_over_peer_natural": ratio(
            ours["train_natural_xla"]["tokens_per_second"],
            peer["train_natural"]["tokens_per_second"]),
        **({"extra_kseq_bf16_over_fp32": {
            "train_natural_tokens_per_second": ratio(
                ours["bf16"]["train_natural"]["tokens_per_second"],
                ours["train_natural"]["tokens_per_second"]),
            "decode_greedy_forced": ratio(
                ours["bf16"]["greedy_forced"]["sentences_per_second"],
                ours["decoding"]["greedy_forced"]["sentences_per_second"]),
        }} if "bf16" in ours else {}),
        "efficiency": {
            "matmul_gflops": round(limit / 1e9, 1),
            # kseq's own batching (its length buckets) first, then the identical-padding run.
            **{f"{name}_{key}": value
               for name in ("natural", "same_padding", "natural_xla")
               for key, value in efficiency(ours[f"train_{name}"], per_token, limit).items()},
        },
    }
    harness.write("bench_translator", result, args)
    return 0


if __name__ == "__main__":
    code = main()
    if {"--tiny", "--smoke"} & set(sys.argv):
        # A smoke run: its JSON is out; TensorFlow's interpreter teardown (1.5-4 s a
        # process, keras-hub's the longest) checks nothing and only delays the caller.
        sys.stdout.flush()
        os._exit(code)
    sys.exit(code)
