"""Rewriting the arrays of a saved `.keras` file (float16 storage, left-out groups), and
the size check before one is opened.

A `.keras` file is a zip holding `config.json`, `metadata.json` and
`model.weights.h5`, an HDF5 tree of groups (one per layer, `vars` inside)
and arrays. Keras writes each variable in its own dtype and every array of
every layer; a shipped preset wants float16 storage (Keras casts arrays back
to the variables' dtype when loading) and no copy of a frozen backbone that
loading rebuilds (`kseq.presets.rebuilt_backbones`). These helpers rewrite the
archive's weights file and copy everything else byte for byte.

Opening a `.keras` file extracts its entries into memory, so a small zip that
declares gigabytes (a "zip bomb": 1.5 MB declaring 2.9 GB) is refused first by
`check_declared_size`, from the zip's directory alone. Keras stores its entries
uncompressed, so a real file declares about its own size; the bound is
`max(MIN_DECLARED_BYTES, MAX_EXPANSION x the size on disk)`. Python's `zipfile`
never reads an entry past its declared size, so the check holds for what Keras
reads too. The same bound holds for the arrays the weights file declares: an
HDF5 dataset that was never written reads as its fill value, so a 452 KB file
declaring a 2 GiB array made `kseq translate` reach 7.2 GB before Keras's
shape check refused it (`_declared_array_bytes`, from HDF5 metadata alone).

Example:
>>> import h5py, numpy as np, os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with h5py.File(os.path.join(folder, "a.h5"), "w") as f:
...     _ = f.create_dataset("layers/dense/vars/0", data=np.ones((2, 2), "float32"))
...     _ = f.create_dataset("layers/backbone/vars/0", data=np.ones(3, "float32"))
...     with h5py.File(os.path.join(folder, "b.h5"), "w") as g:
...         copy_tree(f, g, float16=True, left_out=("layers/backbone",))
...         str(g["layers/dense/vars/0"].dtype), dataset_count(g["layers/backbone"])
('float16', 0)
"""

import io
import os
import struct

from kseq.errors import KseqError

MIN_DECLARED_BYTES = 256 << 20  # any file may declare this much
MAX_EXPANSION = 16  # beyond that, at most this multiple of its size on disk


def check_declared_size(path):
    """`KseqError` when the `.keras` (zip) file at `path` declares more uncompressed bytes,
    or its `.h5` entries more bytes of arrays, than `max(MIN_DECLARED_BYTES, MAX_EXPANSION
    x its size)`; a file that is not a zip, or an entry that is not HDF5, is left to
    Keras's own error."""
    import zipfile

    size = os.path.getsize(path)
    limit = max(MIN_DECLARED_BYTES, MAX_EXPANSION * size)
    try:
        with zipfile.ZipFile(path) as archive:
            declared = sum(info.file_size for info in archive.infolist())
            arrays = {} if declared > limit else {  # a zip bomb's entries are never opened
                info.filename: _declared_array_bytes(archive, info)
                for info in archive.infolist() if info.filename.endswith(".h5")}
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    if declared > limit:
        raise KseqError(f"{path} is not opened: its entries declare {declared:,} bytes "
                        f"uncompressed from {size:,} bytes on disk, more than the {limit:,} "
                        f"a model file may expand to (a zip bomb, or not a Keras file). "
                        f"Received: {path}")
    for name, declared in arrays.items():
        if declared is not None and declared > limit:
            raise KseqError(f"{path} is not opened: its {name} declares {declared:,} bytes of "
                            f"arrays from {size:,} bytes on disk, more than the {limit:,} a "
                            f"model file may hold (arrays never written, which read as their "
                            f"fill value). Received: {path}")


def _declared_array_bytes(archive, info):
    """The bytes of every array an HDF5 entry of `archive` declares (shape x item size),
    read from its metadata without reading any array; None when it is not HDF5.

    Only object headers are touched: 0.1 s for a 15 MB weights file stored in place
    (`_StoredEntry`; through `ZipFile.open`, whose every backward seek reads the entry
    again from its start on Python 3.11, it took 1.5 s)."""
    import h5py
    import zipfile

    total = 0

    def add(_, item):
        nonlocal total
        if isinstance(item, h5py.Dataset):
            total += (item.size or 0) * item.dtype.itemsize  # Python ints; an empty array: None

    stored = info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1
    try:
        with (_StoredEntry(archive.fp, info) if stored else archive.open(info)) as handle, \
                h5py.File(handle, "r") as weights:
            weights.visititems(add)
    except (OSError, ValueError, KeyError, RuntimeError):
        return None
    return total


class _StoredEntry(io.RawIOBase):
    """The bytes of an uncompressed zip entry, read in place from the archive's open file
    `stream` (a seekable, read-only file of `info.file_size` bytes)."""

    def __init__(self, stream, info):
        super().__init__()
        stream.seek(info.header_offset + 26)  # the local header: name and extra lengths
        name_length, extra_length = struct.unpack("<HH", stream.read(4))
        self._stream, self._size, self._position = stream, info.file_size, 0
        self._start = info.header_offset + 30 + name_length + extra_length

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._position

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer):
        count = max(0, min(len(buffer), self._size - self._position))
        self._stream.seek(self._start + self._position)
        data = self._stream.read(count)
        buffer[:len(data)] = data
        self._position += len(data)
        return len(data)


def dataset_count(group):
    """The number of arrays under an HDF5 group."""
    import h5py

    found = []
    group.visititems(lambda _, item: found.append(isinstance(item, h5py.Dataset)))
    return sum(found)


def copy_tree(source, target, float16, left_out, path=""):
    """Copies an HDF5 tree (attributes kept): float32 arrays as float16 if `float16`; the
    arrays under the group paths in `left_out` are dropped, their groups kept."""
    import numpy as np

    for key, value in source.attrs.items():
        target.attrs[key] = value
    dropped = any(path == group or path.startswith(group + "/") for group in left_out)
    for name, item in source.items():
        if not hasattr(item, "dtype"):  # a group
            child = f"{path}/{name}".lstrip("/")
            copy_tree(item, target.create_group(name), float16, left_out, child)
            continue
        if dropped:
            continue
        data = item[()]
        if float16 and item.dtype == np.float32:
            data = data.astype(np.float16)
        copied = target.create_dataset(name, data=data)
        for key, attribute in item.attrs.items():
            copied.attrs[key] = attribute


def rewrite_weights(path, target, change_weights, scratch):
    """Copies the `.keras` zip `path` to `target`, its `model.weights.h5` passed through
    `change_weights(file_path)` (which edits or replaces that file in place)."""
    import zipfile

    with zipfile.ZipFile(path) as archive, zipfile.ZipFile(target, "w") as out:
        for info in archive.infolist():
            data = archive.read(info.filename)
            if info.filename.endswith(".weights.h5"):
                weights_file = os.path.join(scratch, "weights.h5")
                with open(weights_file, "wb") as handle:
                    handle.write(data)
                change_weights(weights_file)
                with open(weights_file, "rb") as handle:
                    data = handle.read()
                os.remove(weights_file)
            out.writestr(info, data)
