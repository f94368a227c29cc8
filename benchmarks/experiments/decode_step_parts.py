"""Where one greedy step at batch 1 goes, against CTranslate2's step on the same weights.

    python benchmarks/experiments/decode_step_parts.py \
        --json benchmarks/experiments/results/decode_step_parts.json

The question (issue #33's goal: kseq at batch 1 >= 0.5x CTranslate2 float32; missed
on the AVX-512/AMX CPU of `results/bench_engines_threads1_amx.json`, 0.44-0.45x):
what does a batch-1 step cost, and which part of it could be cut? One thread. A
step's time is taken from forced-length searches (`min_length = max_length = n`,
one short input) as `(time(n=48) - time(n=8)) / 40`, medians over `--repeats`;
the same for CTranslate2 (`min/max_decoding_length`) on the model's export. Then,
in the same process:

- the step's 25 matrix products alone (q, k, v, output of self-attention; q and
  output of cross-attention; the feed-forward pair, in each of the blocks; the
  tied projection) in a TensorFlow `while` loop, and the same in NumPy: at batch 1
  each reads its weights once, so this is the memory-bound floor of any engine;
- the step with every layer norm replaced by the identity (the outputs are then
  wrong: a timing of their share only);
- the graph nodes in the search loop's body.

Prints JSON.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import tempfile  # noqa: E402

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)

PRESET = "libreoffice_en_fr_transformer"
SMOKE_PRESET = "numbers_fr_transformer"
TEXT = "Save the file"
LENGTHS, SMOKE_LENGTHS = (8, 48), (4, 24)  # the smoke preset's outputs stop at 32
LOOP_STEPS = 48


def per_step_ms(run, repeats, lengths):
    """`(ms per step, ms fixed)` of `run(n)`, a search forced to `n` steps (each length
    run once untimed first: tracing, warm caches)."""
    short, long = lengths
    short_seconds = harness.median_seconds(lambda: run(short), repeats)[1]
    long_seconds = harness.median_seconds(lambda: run(long), repeats)[1]
    step = (long_seconds - short_seconds) / (long - short)
    return round(1000 * step, 3), round(1000 * (short_seconds - short * step), 2)


def kseq_runner(model):
    return lambda n: model.translate([TEXT], beam_size=1, min_length=n, max_length=n)


def ctranslate2_runner(model, folder):
    """The same forced search through CTranslate2 on `model`'s export (one thread)."""
    from kseq.ctranslate2 import CTranslate2Translator
    from kseq.models.translator.ctranslate2_export import export_ctranslate2

    export_ctranslate2(model, folder)
    ct2 = CTranslate2Translator(folder, intra_threads=1)
    tokens = ct2.source_tokens([TEXT])[0]
    return lambda n: ct2.translator.translate_batch(tokens, beam_size=1, min_decoding_length=n,
                                                    max_decoding_length=n)


def step_kernels(model):
    """The step's weight matrices in use order (per block: self-attention q, k, v, output;
    cross-attention q, output; feed-forward in, out; cross k and v are computed once per
    sentence), and the tied embedding table of the projection."""
    kernels = [w.numpy() for w in model.decoder.weights
               if len(w.shape) == 2 and "decoder_block" in w.path
               and not any(f"cross_attention/{part}/" in w.path for part in ("key", "value"))]
    return kernels, model.decoder.token_embedding.embeddings.numpy()


def matmul_floor_ms(kernels, embeddings, repeats):
    """ms per step of the step's products at batch 1: in a TensorFlow loop, and in NumPy."""
    import numpy as np
    import tensorflow as tf

    constants = [tf.constant(k) for k in kernels]
    table = tf.constant(embeddings)

    def chain(h, mats, project):
        for kernel in mats:  # in use order, each product's output is the next one's input
            h = h @ kernel
        return project(h)

    @tf.function(autograph=False)
    def loop(x):
        # Each step's products depend on the step before (the sum is zero: no drift).
        body = lambda i, x: (i + 1, x + 0.0 * tf.reduce_sum(chain(
            x, constants, lambda h: tf.matmul(h, table, transpose_b=True))))
        return tf.while_loop(lambda i, x: i < LOOP_STEPS, body, (0, x))[1]

    x = tf.random.normal([1, embeddings.shape[1]])
    seconds = harness.median_seconds(lambda: loop(x), repeats)[1]
    row = x.numpy()
    numpy_step = lambda: chain(row, kernels, lambda h: h @ embeddings.T)
    numpy_seconds = harness.median_seconds(
        lambda: [numpy_step() for _ in range(LOOP_STEPS)], repeats)[1]
    return round(1000 * seconds / LOOP_STEPS, 3), round(1000 * numpy_seconds / LOOP_STEPS, 3)


def loop_body_nodes(model):
    """Nodes in the greedy search loop's body (the first `While` found)."""
    import tensorflow as tf

    generate = model.compiled_generate(model.search_settings(beam_size=1))
    graph = generate.get_concrete_function(tf.TensorSpec([None], tf.string)).graph.as_graph_def()
    functions = {f.signature.name: f for f in graph.library.function}
    pending = list(graph.node)
    while pending:
        node = pending.pop(0)
        if node.op in ("While", "StatelessWhile"):
            return len(functions[node.attr["body"].func.name].node_def)
        for attr in ("f", "then_branch", "else_branch"):
            if attr in node.attr and node.attr[attr].func.name in functions:
                pending.extend(functions[node.attr[attr].func.name].node_def)
    return None


def main(argv=None):
    parser = harness.arguments(__doc__, repeats=15)
    args = harness.parse(parser, argv)
    import keras
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from kseq.zoo import translator

    preset = SMOKE_PRESET if args.smoke else PRESET
    model = translator(preset)
    kernels, embeddings = step_kernels(model)
    lengths = SMOKE_LENGTHS if args.smoke else LENGTHS
    result = {"preset": preset, "threads": 1, "forced_lengths": list(lengths),
              "weights_read_per_step_mb": round(
                  4 * (sum(k.size for k in kernels) + embeddings.size) / 1e6, 1)}
    result["kseq_step_ms"], result["kseq_fixed_ms"] = per_step_ms(kseq_runner(model),
                                                                  args.repeats, lengths)
    with tempfile.TemporaryDirectory() as folder:
        result["ct2_step_ms"], result["ct2_fixed_ms"] = per_step_ms(
            ctranslate2_runner(model, _os.path.join(folder, "ct2")), args.repeats, lengths)
    result["matmuls_only_step_ms"] = dict(zip(("tensorflow_loop", "numpy"),
                                              matmul_floor_ms(kernels, embeddings, args.repeats)))
    result["loop_body_nodes"] = loop_body_nodes(model)
    # Last: the patch reaches every LayerNormalization built or called from here on.
    keras.layers.LayerNormalization.call = lambda self, inputs: inputs
    result["kseq_step_ms_without_layer_norms"] = per_step_ms(
        kseq_runner(translator(preset)), args.repeats, lengths)[0]
    harness.write("decode_step_parts", result, args,
                  path=harness.experiment_result("decode_step_parts"))
    return result


if __name__ == "__main__":
    _sys.exit(0 if main() else 1)
