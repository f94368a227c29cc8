"""Scaling curves: decoding over batch and beam size, training over width and sentence length.

    .venv/bin/python benchmarks/bench_scaling.py                 # ~7 min on a quiet 2-core CPU
    .venv/bin/python benchmarks/bench_scaling.py --smoke --json - --png /tmp/scaling.png

Issue #33, item 4. Four curves, one JSON and one PNG of four panels:

- **Decoding over batch**: the shipped `libreoffice_en_fr_transformer` preset
  (`kseq.zoo.translator`) translating the first `--sentences` (128) paragraphs
  of its committed slice greedily at batch sizes 1, 4, 16, 64, 256 (batch 256:
  the 128 paragraphs twice, one full batch of the same mix of lengths);
  sentences/s and ms per sentence, medians of `--repeats` timed `translate()`
  calls after one untimed call on one batch (the search's trace).
- **Decoding over beam**: the same at beam sizes 1, 2, 4, 8, at batch 16.
- **Training over width**: a Transformer translator of the preset recipe's
  architecture (3+3 layers, shared embeddings, pre-norm as shipped), untrained,
  at widths 128, 256, 512, 1024 (feed-forward 4x, heads of 64 dimensions), at
  sentence length 64.
- **Training over sentence length**: the same at width 256, lengths 16 to 256.

Training batches are **synthetic**: random token ids of the preset's vocabulary,
every row filling the length (so real tokens = padded tokens: the curves measure
compute, not padding), a fixed `--batch-tokens` target tokens per step (rows =
tokens / length, so every length does the same weight FLOPs per step). Each
point builds its model, traces and runs one untimed step (optimizer built
first: one trace), then times `--steps` steps. Reported: real (non-pad) target
tokens/s, and the fraction of the matmul limit: FLOPs per target token x target
tokens/s / the FLOP/s of a 2048-square float32 matmul measured in this run
(`translator_setup.matmul_flops`, before and after the training points; the
larger is the limit). FLOPs per target token: `translator_setup.flops_per_token`
(6 x the weights a source and a target token meet, the encoder's with the
decoder's: sources are as long as targets) plus the attention scores, which
that count leaves out and which grow with the length: 12 T d per query per
attention (QK^T and the weighted sum, forward and backward), 3 L attentions.

**Linearity**: for each step of each curve (`size` -> the next), `cost_growth`
(time per batch call, per sentence or per training step) over `work_growth`
(batch rows, beam rows, FLOPs per step): 1.0 is cost growing in proportion to
the work; well below 1 is fixed costs (op dispatch, per-call Python and
tokenisation, per-step overheads) being amortised; above 1 is each unit of work
getting dearer (memory traffic: beam reordering, caches, attention's T^2
tensors out of cache). `linear_from` names the first size from which every
step is within 20% of proportional.

Prints JSON and writes benchmarks/results/bench_scaling.json and .png (with
`--smoke`: nothing, unless `--json` / `--png` name files).

Measured (the method notes docs/results.md held; its table keeps the headline figures):

scaling curves, one thread (`bench_scaling.py --threads 1`, AVX-512 CPU, load 0.4-1;
curves: benchmarks/results/bench_scaling.png): decoding the shipped LibreOffice
preset, 128 slice paragraphs, greedy: 12.1 / 24.1 / 51.0 / 67.0 / 64.8 sentences/s at batch
1 / 4 / 16 / 64 / 256: the per-sentence cost falls until batch 64 (fixed per-step op
dispatch shared by more rows), then grows with the rows (arithmetic-bound; 256 gains
nothing); beam 1 / 2 / 4 / 8 at batch 16: 51.0 / 34.4 / 20.3 / 13.0 sentences/s (cost
0.74-0.85x the beam growth: the beams share the encoder and the per-step dispatch). Training
a 3+3-layer Transformer of the preset's shape on synthetic full rows, 2,048 target tokens a
step: width 128 / 256 / 512 / 1024 at length 64: 2,970 / 1,279 / 459 / 146 tokens/s = **0.42
/ 0.56 / 0.68 / 0.79** of the in-run 2048² matmul (96-108 GFLOP/s): small widths lose to
per-op overhead, cost grows linearly with FLOPs from 256 on; length 16-256 at width 256:
1,268-1,437 tokens/s, 0.56-0.63: flat (attention scores are 1% of the FLOPs at 16 tokens,
14% at 256: not yet enough to bend the curve at this width)
"""

import gc
import os
import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow
from translator_setup import flops_per_token, matmul_flops

PRESET = "libreoffice_en_fr_transformer"
SMOKE_PRESET = "numbers_fr_transformer"  # tiny bundled weights: seconds to load and decode
HEAD_DIM = 64
# A step's cost within 20% of proportional to its work counts as linear.
LINEAR_BAND = (0.8, 1.25)

FULL = dict(preset=PRESET, sentences=128, batches=(1, 4, 16, 64, 256), beams=(1, 2, 4, 8),
            beam_batch=16, widths=(128, 256, 512, 1024), width_length=64,
            lengths=(16, 32, 64, 128, 256), length_width=256, batch_tokens=2048, steps=3,
            layers=None, matmul_size=2048, matmul_calls=10)
# Seconds of work: the same code path with a tiny decoder, two points per curve and a
# one-layer model (the shared point of the two training curves is trained once).
SMOKE = dict(preset=SMOKE_PRESET, sentences=8, batches=(1, 4), beams=(1, 2), beam_batch=4,
             widths=(32, 64), width_length=16, lengths=(8, 16), length_width=32,
             batch_tokens=128, steps=1, layers=1, matmul_size=512, matmul_calls=2)


def progress(point, figure):
    """One line on stderr per point (a full run takes minutes; stdout is the JSON)."""
    sizes = ", ".join(f"{key} {point[key]}" for key in ("batch", "beam", "width", "length")
                      if key in point)
    print(f"bench_scaling: {sizes}: {point[figure]} {figure}", file=sys.stderr, flush=True)


# === Decoding ===

def slice_sources(preset, count):
    """The first `count` source paragraphs of `preset`'s committed slice (at most its 200)."""
    from kseq.presets.catalog import slice_pairs  # no TensorFlow: the committed slice

    return [source for source, _ in slice_pairs(preset)[:count]]


def filled(texts, batch):
    """`texts` repeated whole until they fill at least one `batch`: a batch larger than the
    paragraphs is measured full, on the same mix of lengths as the smaller ones."""
    return texts * -(-batch // len(texts))


def decode_point(model, texts, batch, beam, repeats):
    """Sentences/s of `model.translate(texts)` at `batch` and `beam`: one untimed call on one
    batch (the search's trace; its signature has free batch and length dimensions, so
    later calls do not trace), then the median of `repeats` timed calls. `texts` are
    `filled` to the batch first."""
    texts = filled(texts, batch)
    model.translate(texts[:batch], beam_size=beam, batch_size=batch)
    outputs = []
    _, seconds = harness.median_seconds(
        lambda: outputs.append(model.translate(texts, beam_size=beam, batch_size=batch)),
        repeats, warmup=0)
    words = sum(len(text.split()) for text in outputs[-1]) / len(texts)
    return {"batch": batch, "beam": beam, "sentences": len(texts),
            "sentences_per_second": round(len(texts) / seconds, 2),
            "ms_per_sentence": round(1000 * seconds / len(texts), 2),
            "seconds_per_call": round(seconds, 3), "output_words_per_sentence": round(words, 2)}


def decoding_curves(model, texts, sizes, repeats):
    """The batch curve (greedy) and the beam curve (at `beam_batch`); a point both curves
    have (greedy at `beam_batch`) is measured once."""
    points = {}

    def point(batch, beam):
        if (batch, beam) not in points:
            points[batch, beam] = decode_point(model, texts, batch, beam, repeats)
            progress(points[batch, beam], "sentences_per_second")
        return points[batch, beam]

    return {"batch": [point(batch, 1) for batch in sizes["batches"]],
            "beam": [point(sizes["beam_batch"], beam) for beam in sizes["beams"]]}


# === Training ===

def architecture(width, length, layers):
    """The preset recipe's model options at `width` (feed-forward 4x, 64-dimension heads)
    with room for `length` tokens; `layers` replaces the recipe's layer count if given."""
    options = dict(hidden_dim=width, intermediate_dim=4 * width,
                   num_heads=max(1, width // HEAD_DIM),
                   max_source_length=length, max_target_length=length)
    return dict(options, num_layers=layers) if layers else options


def training_model(tokenizer, width, length, layers):
    """An untrained translator of the preset recipe's architecture, compiled as the recipe
    says, its optimizer built now (else Keras builds it in the first step's trace and
    traces that step again: two traces, both untimed, but twice the warm-up)."""
    from kseq import zoo

    model = zoo.translator(PRESET, load_weights=False, vocab=tokenizer,
                           **architecture(width, length, layers))
    model.optimizer.build(model.trainable_variables)
    return model


def synthetic_batch(vocabulary_size, rows, length, seed):
    """`({"source_ids", "decoder_ids"}, labels)` of random regular token ids, every row
    filling `length` (no padding): the decoder reads `<s>` and the labels shifted by one."""
    import numpy as np
    import tensorflow as tf

    from kseq.text import RESERVED_TOKENS, START_ID

    generator = np.random.default_rng(seed)
    low = len(RESERVED_TOKENS)  # no <pad>, <unk>, <s>, </s>: every position is a real token
    source = generator.integers(low, vocabulary_size, [rows, length], dtype="int32")
    labels = generator.integers(low, vocabulary_size, [rows, length], dtype="int32")
    decoder = np.concatenate([np.full([rows, 1], START_ID, "int32"), labels[:, :-1]], axis=1)
    return ({"source_ids": tf.constant(source), "decoder_ids": tf.constant(decoder)},
            tf.constant(labels))


def step_flops(width, length, layers, vocabulary_size, target_tokens):
    """Training FLOPs of one step: `target_tokens` target tokens, each with a source token.

    The weights' share is `translator_setup.flops_per_token` (6 x the weights a token
    meets); the attention scores it leaves out are 12·T·d per query and attention
    (QK^T and the weighted sum: T·d multiply-adds each, 4·T·d FLOPs forward, times 3 for
    training), and a target token brings 3·L attentions (encoder self, decoder self and
    cross; causal ones are computed whole, masked)."""
    size = {"width": width, "ff": 4 * width, "layers": layers, "vocab": vocabulary_size}
    weights = flops_per_token(size)
    per_token_weights = weights["source"] + weights["target"]
    per_token_attention = 12 * length * width * 3 * layers
    return {"per_target_token": per_token_weights + per_token_attention,
            "attention_share": round(per_token_attention /
                                     (per_token_weights + per_token_attention), 4),
            "per_step": (per_token_weights + per_token_attention) * target_tokens}


def train_point(tokenizer, width, length, sizes, layers):
    """Target tokens/s and seconds per step of one width and length: one untimed step
    (the trace), then `steps` timed steps on fixed synthetic batches."""
    rows = max(1, sizes["batch_tokens"] // length)
    model = training_model(tokenizer, width, length, sizes["layers"])
    batches = [synthetic_batch(tokenizer.vocabulary_size, rows, length, seed)
               for seed in range(sizes["steps"] + 1)]
    started = time.perf_counter()
    model.train_on_batch(*batches[0])
    warm_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for features, labels in batches[1:]:
        logs = model.train_on_batch(features, labels, return_dict=True)
    seconds = (time.perf_counter() - started) / sizes["steps"]
    from keras import ops  # count the real (non-pad) labels as the loss does: not assumed

    from kseq.text import PAD_ID

    tokens = sum(int(ops.sum(ops.cast(labels != PAD_ID, "int32"))) for _, labels in batches[1:])
    parameters = model.count_params()
    del model
    gc.collect()  # a 1024-wide model and its Adam slots: over a GB, not kept to the next point
    return {"width": width, "length": length, "rows": rows, "heads": max(1, width // HEAD_DIM),
            "parameters": parameters, "timed_steps": sizes["steps"],
            "seconds_per_step": round(seconds, 4),
            "target_tokens_per_second": round(tokens / sizes["steps"] / seconds, 1),
            "warmup_seconds_incl_trace": round(warm_seconds, 2),
            "last_loss": round(float(logs["loss"]), 3)}


def training_curves(tokenizer, sizes, layers):
    """The width curve (at `width_length`) and the length curve (at `length_width`), each
    point with its FLOPs; the point both curves have is trained once."""
    points = {}

    def point(width, length):
        if (width, length) not in points:
            entry = train_point(tokenizer, width, length, sizes, layers)
            entry["flops"] = step_flops(width, length, layers, tokenizer.vocabulary_size,
                                        entry["rows"] * length)
            points[width, length] = entry
            progress(entry, "target_tokens_per_second")
        return points[width, length]

    return {"width": [point(width, sizes["width_length"]) for width in sizes["widths"]],
            "length": [point(sizes["length_width"], length) for length in sizes["lengths"]]}


def add_matmul_fractions(curves, limit):
    """Each training point's achieved GFLOP/s and its fraction of the matmul limit."""
    for points in curves.values():
        for entry in points:
            achieved = entry["flops"]["per_target_token"] * entry["target_tokens_per_second"]
            entry["achieved_gflops"] = round(achieved / 1e9, 2)
            entry["fraction_of_matmul"] = round(achieved / limit, 4)


# === Linearity ===

def linearity(points, size_key, cost, work):
    """Per step of a curve: how the cost grew against the work.

    `cost(point)` and `work(point)` give each point's cost (seconds) and work (rows,
    FLOPs). Returns the steps (`from`, `to`, `size_growth`, `work_growth`,
    `cost_growth`, `cost_over_work`, `reading`) and `linear_from`: the first size from
    which every later step is within `LINEAR_BAND` of proportional (None if none)."""
    steps = []
    for before, after in zip(points, points[1:]):
        work_growth = work(after) / work(before)
        cost_growth = cost(after) / cost(before)
        over = cost_growth / work_growth
        reading = ("sublinear" if over < LINEAR_BAND[0] else
                   "superlinear" if over > LINEAR_BAND[1] else "linear")
        steps.append({"from": before[size_key], "to": after[size_key],
                      "size_growth": round(after[size_key] / before[size_key], 3),
                      "work_growth": round(work_growth, 3), "cost_growth": round(cost_growth, 3),
                      "cost_over_work": round(over, 3), "reading": reading})
    linear_from = None
    for index in range(len(steps) - 1, -1, -1):  # the longest all-linear tail
        if steps[index]["reading"] != "linear":
            break
        linear_from = steps[index]["from"]
    summary = "; ".join(f"{step['from']}->{step['to']} {step['reading']} "
                        f"({step['cost_over_work']:g})" for step in steps)
    return {"steps": steps, "linear_from": linear_from,
            "summary": summary + (f": linear from {linear_from}" if linear_from else "")}


def linearity_readings(decoding, training):
    """The four curves' linearity: decoding's cost per batch call against the rows it
    holds (batch), its cost per sentence against the beam's rows; training's seconds per
    step against its FLOPs per step (width: weights ~ d^2; length: only attention grows,
    the tokens per step being fixed)."""
    return {
        "decoding_batch": linearity(decoding["batch"], "batch",
                                    lambda p: p["ms_per_sentence"] * p["batch"],
                                    lambda p: p["batch"]),
        "decoding_beam": linearity(decoding["beam"], "beam",
                                   lambda p: p["ms_per_sentence"], lambda p: p["beam"]),
        "training_width": linearity(training["width"], "width", lambda p: p["seconds_per_step"],
                                    lambda p: p["flops"]["per_step"]),
        "training_length": linearity(training["length"], "length",
                                     lambda p: p["seconds_per_step"],
                                     lambda p: p["flops"]["per_step"]),
    }


# === The picture ===

def plot(result, path):
    """Four panels: sentences/s over batch and over beam; training target tokens/s (and
    the fraction of the matmul limit, right axis) over width and over length."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    decoding, training = result["decoding"], result["training"]
    figure, axes = plt.subplots(2, 2, figsize=(10, 7))
    for panel, (key, label) in zip(axes[0], (("batch", "batch size (greedy)"),
                                             ("beam", f"beam size (batch "
                                                      f"{decoding['beam'][0]['batch']})"))):
        sizes = [p[key] for p in decoding[key]]
        panel.plot(sizes, [p["sentences_per_second"] for p in decoding[key]], "o-")
        panel.set_xscale("log", base=2)
        panel.set_xticks(sizes, [str(size) for size in sizes])
        panel.set(xlabel=label, ylabel="sentences/s", title=f"decoding over {key}")
        panel.set_ylim(bottom=0)  # a ratio of heights is a ratio of speeds
    for panel, key in zip(axes[1], ("width", "length")):
        sizes = [p[key] for p in training[key]]
        panel.plot(sizes, [p["target_tokens_per_second"] for p in training[key]], "o-",
                   color="tab:blue")
        panel.set_xscale("log", base=2)
        panel.set_xticks(sizes, [str(size) for size in sizes])
        panel.set(xlabel=key, title=f"training over {key}")
        panel.set_ylabel("target tokens/s", color="tab:blue")
        panel.set_ylim(bottom=0)
        share = panel.twinx()
        share.plot(sizes, [p["fraction_of_matmul"] for p in training[key]], "s--",
                   color="tab:orange")
        share.set_ylabel("fraction of the matmul limit", color="tab:orange")
        share.set_ylim(bottom=0)
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=100, format="png")
    finally:
        plt.close(figure)
    return path


def png_path(args):
    """Where the picture goes: `--png` (`-`: nowhere), else nowhere with `--smoke`, else
    next to the JSON's default, `benchmarks/results/bench_scaling.png`."""
    if args.png:
        return None if args.png == "-" else args.png
    return None if args.smoke else os.path.join(harness.RESULTS, "bench_scaling.png")


# === The run ===

def main(argv=None):
    """Decodes, trains, measures the matmul limit; writes the JSON and the PNG."""
    parser = harness.arguments(__doc__, repeats=3)
    parser.add_argument("--png", default=None, metavar="PATH",
                        help="the picture (default benchmarks/results/bench_scaling.png; "
                             "- for none; with --smoke: none unless given)")
    parser.add_argument("--sentences", type=int, default=FULL["sentences"],
                        help="slice paragraphs each decoding point translates (at most "
                             "200; a larger batch translates them repeated)")
    parser.add_argument("--steps", type=int, default=FULL["steps"],
                        help="timed training steps per point (after one untimed)")
    parser.add_argument("--batch-tokens", type=int, default=FULL["batch_tokens"],
                        help="target tokens per training step (rows = tokens / length)")
    args = harness.parse(parser, argv)
    sizes = dict(SMOKE) if args.smoke else dict(
        FULL, sentences=args.sentences, steps=args.steps, batch_tokens=args.batch_tokens)
    started = time.perf_counter()
    from kseq import zoo

    model = zoo.translator(sizes["preset"])
    decoding = decoding_curves(model, slice_sources(sizes["preset"], sizes["sentences"]),
                               sizes, args.repeats)
    tokenizer = model.target_tokenizer  # the preset's shared vocabulary (7,890 WordPiece)
    del model
    layers = sizes["layers"] or zoo.load_recipe(PRESET)["model"]["num_layers"]
    limits = [matmul_flops(sizes["matmul_size"], sizes["matmul_calls"])]
    training = training_curves(tokenizer, sizes, layers)
    limits.append(matmul_flops(sizes["matmul_size"], sizes["matmul_calls"]))
    add_matmul_fractions(training, max(limits))
    result = {
        "decoding_preset": sizes["preset"], "sentences": sizes["sentences"],
        "repeats": args.repeats,
        "training_model": {"recipe": PRESET, "layers": layers, "feed_forward": "4 x width",
                           "head_dim": HEAD_DIM, "vocabulary": tokenizer.vocabulary_size,
                           "batch_target_tokens": sizes["batch_tokens"],
                           "timed_steps": sizes["steps"],
                           "data": "synthetic: random regular token ids, every row filling "
                                   "its length (real tokens = padded tokens)"},
        "matmul_gflops": {"before_training": round(limits[0] / 1e9, 1),
                          "after_training": round(limits[1] / 1e9, 1),
                          "size": sizes["matmul_size"]},
        "decoding": decoding, "training": training,
        "linearity": linearity_readings(decoding, training),
        "seconds": round(time.perf_counter() - started, 1),
    }
    picture = png_path(args)
    if picture:
        result["png"] = plot(result, picture)
    harness.write("bench_scaling", result, args)
    return result


if __name__ == "__main__":
    main_result = main()
    if "--smoke" in sys.argv:
        # The JSON is out; TensorFlow's interpreter teardown (seconds) checks nothing.
        sys.stdout.flush()
        os._exit(0 if main_result else 1)
    sys.exit(0 if main_result else 1)
