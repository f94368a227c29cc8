"""Where one training step of kseq on OpenNMT-tf's configuration goes, in float32 and bf16.

    python benchmarks/experiments/onmt_step_parts.py --steps 12 \
        --json benchmarks/experiments/results/onmt_step_parts.json

The question (issue #33): kseq trains OpenNMT-tf's configuration at about the
peer's speed in float32, and bf16 compute (native AMX / AVX-512 bf16 matmuls)
adds only ~1.3x. Which parts of the step take the time? The same 4,096-token
batches (`bench_onmt_config.py`'s fine buckets) are timed through growing
prefixes of the step, each a `tf.function` traced once per shape before timing:

- `forward`: encoder and decoder up to the hidden states (`training=True`);
- `forward_loss`: + the tied output projection on real label rows and the
  label-smoothed loss;
- `gradients`: + the backward pass (the gradients are computed, not applied);
- `train_step`: Keras's `train_on_batch` with kseq's real-rows step, FusedAdam
  and the metrics;
- `train_step_without_dropout`: the same with a second model built with dropout 0
  (what the dropout masks cost).

Differences between neighbours give the parts (means over the same batches,
timed one prefix after the other: a part smaller than the run-to-run noise,
such as the optimizer's in bf16, can come out slightly negative). Also in the same run: a 2048²
matmul's GFLOP/s in float32 and in bfloat16 (the arithmetic limit of each), and
the step's FLOPs over real tokens (6 x weights met per token, as
`bench_translator.py` counts them). Prints JSON.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import time  # noqa: E402

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import tensorflow as tf  # noqa: E402

from kseq import zoo  # noqa: E402
from translator_setup import (flops_per_token, matmul_flops, onmt_config_batches,  # noqa: E402
                              onmt_config_model, onmt_config_recipe)

BOUNDARIES = [8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96]


def parts(model):
    """`{name: tf.function(features, labels)}`: growing prefixes of the training step."""
    pad = model.loss.pad_id

    def forward_loss(x, y):
        states = model.hidden_states(x, training=True)
        real = tf.not_equal(y, pad)
        logits = model.project(tf.boolean_mask(states, real))
        return model.compute_loss(x=x, y=tf.boolean_mask(y, real), y_pred=logits, training=True)

    def gradients(x, y):
        with tf.GradientTape() as tape:
            loss = forward_loss(x, y)
        return tape.gradient(loss, model.trainable_weights)

    return {"forward": tf.function(lambda x, y: model.hidden_states(x, training=True)),
            "forward_loss": tf.function(forward_loss),
            "gradients": tf.function(gradients),
            "train_step": lambda x, y: model.train_on_batch(x, y)}


def time_part(call, warm, timed):
    for features, labels in warm:
        harness._finish(call(features, labels))
    started = time.perf_counter()
    for features, labels in timed:
        harness._finish(call(features, labels))
    return (time.perf_counter() - started) / len(timed)


def flops_per_step(model, timed):
    """6 x weights met per real token (`flops_per_token`), over the timed batches' mean
    real source and target tokens."""
    size = {"width": 256, "ff": 1024, "layers": 3,
            "vocab": len(model.target_tokenizer.vocabulary)}
    per_token = flops_per_token(size)
    source = sum(int(tf.math.count_nonzero(b[0]["source_ids"])) for b in timed) / len(timed)
    target = sum(int(tf.math.count_nonzero(b[1])) for b in timed) / len(timed)
    return source * per_token["source"] + target * per_token["target"]


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--steps", type=int, default=12, help="timed batches per part")
    args = harness.parse(parser, argv)
    if args.smoke:
        args.steps = 2
    recipe = onmt_config_recipe(BOUNDARIES)
    splits = zoo.build_data(recipe)
    result = {"matmul_gflops": {dtype: round(matmul_flops(calls=20, dtype=dtype) / 1e9, 1)
                                for dtype in ("float32", "bfloat16")}}
    for precision in ("float32", "mixed_bfloat16"):
        model = onmt_config_model(recipe, splits["train"], precision)
        warm, timed = onmt_config_batches(model, splits["train"], BOUNDARIES, args.steps)
        seconds = {name: round(time_part(call, warm, timed), 4)
                   for name, call in parts(model).items()}
        flops = flops_per_step(model, timed)
        no_dropout = onmt_config_model(onmt_config_recipe(BOUNDARIES, dropout=0.0),
                                       splits["train"], precision)
        seconds["train_step_without_dropout"] = round(time_part(
            lambda x, y: no_dropout.train_on_batch(x, y), warm, timed), 4)
        result[precision] = {
            "seconds_per_step": seconds,
            "parts_seconds": {
                "encoder_decoder_forward": seconds["forward"],
                "projection_and_loss_forward": round(seconds["forward_loss"] - seconds["forward"], 4),
                "backward": round(seconds["gradients"] - seconds["forward_loss"], 4),
                "optimizer_and_metrics": round(seconds["train_step"] - seconds["gradients"], 4)},
            "real_gflop_per_step": round(flops / 1e9, 1),
            "real_gflops_achieved": round(flops / seconds["train_step"] / 1e9, 1)}
    result["train_step_float32_over_bf16"] = harness.ratio(
        result["float32"]["seconds_per_step"]["train_step"],
        result["mixed_bfloat16"]["seconds_per_step"]["train_step"], 3)
    harness.write("onmt_step_parts", result, args,
                  path=harness.experiment_result("onmt_step_parts"))
    return result


if __name__ == "__main__":
    _sys.exit(0 if main() else 1)
