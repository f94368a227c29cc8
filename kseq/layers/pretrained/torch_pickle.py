"""Reads the tensors of a `torch.save` checkpoint with numpy alone (no torch, no code run).

`torch.save` has written two formats:

- **legacy** (torch < 1.6, and `_use_new_zipfile_serialization=False`): five
  pickles in a row — a magic number, the protocol version (1001), system
  information, the object (its storages as persistent ids), and the list of
  storage keys — followed, for each key in that list, by an int64 element
  count and the storage's raw little-endian bytes.
  `efficientnet-lite0-57934424.pth` is one of these.
- **zip** (torch >= 1.6): a zip archive `<name>/data.pkl` (the object) with
  each storage in `<name>/data/<key>`.

Either way the object is a pickle, and unpickling runs whatever callables it
names. This reader resolves only the names a state dict needs
(`collections.OrderedDict`, `torch._utils._rebuild_tensor_v2` and the typed
storage classes, which become numpy dtypes) and refuses every other name with
a `TorchCheckpointError`, so a hostile file cannot run code.

Example:
>>> from kseq.layers.pretrained.torch_pickle import STORAGE_DTYPES
>>> str(STORAGE_DTYPES["FloatStorage"]), str(STORAGE_DTYPES["LongStorage"])
('float32', 'int64')
"""

import collections
import io
import pickle
import struct
import zipfile

import numpy as np

from kseq.errors import KseqError

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001

# torch's typed storage classes (torch.<Name>) and the numpy dtype of one element.
STORAGE_DTYPES = {
    "DoubleStorage": np.dtype("<f8"),
    "FloatStorage": np.dtype("<f4"),
    "HalfStorage": np.dtype("<f2"),
    "BFloat16Storage": np.dtype("<u2"),  # widened to float32 once read
    "LongStorage": np.dtype("<i8"),
    "IntStorage": np.dtype("<i4"),
    "ShortStorage": np.dtype("<i2"),
    "CharStorage": np.dtype("i1"),
    "ByteStorage": np.dtype("u1"),
    "BoolStorage": np.dtype("?"),
}


class TorchCheckpointError(KseqError):
    """The file is not a torch checkpoint this reader accepts (or names code it will not run)."""


class _StorageType:
    """Stands in for `torch.<Name>Storage` inside the pickle: only its dtype matters."""

    def __init__(self, name):
        self.name = name
        self.dtype = STORAGE_DTYPES[name]


class _Storage:
    """One storage: its dtype, element count, and (once read) a flat numpy array."""

    def __init__(self, storage_type, numel):
        self.dtype = storage_type.dtype
        self.bfloat16 = storage_type.name == "BFloat16Storage"
        self.numel = int(numel)
        self.array = None


class _Tensor:
    """A view into a storage, resolved to a numpy array after the storages are read."""

    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset = storage, int(offset)
        self.size, self.stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)

    def to_numpy(self):
        flat = self.storage.array
        if self.storage.bfloat16:  # numpy has no bfloat16: the high half of a float32
            flat = (flat.astype(np.uint32) << 16).view(np.float32)
        if not self.size:
            return np.array(flat[self.offset])
        if len(self.size) != len(self.stride) or min(self.stride, default=0) < 0:
            raise TorchCheckpointError(
                "A tensor needs one non-negative stride per dimension. Received: "
                f"size={self.size}, stride={self.stride}")
        last = self.offset + sum((n - 1) * s for n, s in zip(self.size, self.stride))
        if min(self.size) > 0 and (self.offset < 0 or last >= flat.size):
            raise TorchCheckpointError(
                "A tensor reaches past the end of its storage (a damaged file?). Received: "
                f"size={self.size}, stride={self.stride}, offset={self.offset}, "
                f"storage elements={flat.size}")
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset:], shape=self.size,
            strides=[s * flat.itemsize for s in self.stride])
        return np.array(view, order="C")  # a copy: C-contiguous, writable, owns its memory


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    if not isinstance(storage, _Storage):
        raise TorchCheckpointError(f"A tensor should be built on a storage. Received: {storage!r}")
    return _Tensor(storage, storage_offset, size, stride)


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves the few names a state dict needs; storages come from `storage_for(key, ...)`."""

    def __init__(self, file, storage_for):
        super().__init__(file)
        self.storage_for = storage_for

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        raise TorchCheckpointError(
            "This reader loads state dicts of tensors only and will not run other code named "
            "in the file (convert it with torch itself if you trust it). "
            f"Received: {module}.{name}")

    def persistent_load(self, saved_id):
        # zip: ('storage', type, key, location, numel); legacy adds view metadata (None
        # unless the storage is a view into another one, which torch >= 0.4 never writes).
        if not (isinstance(saved_id, tuple) and len(saved_id) in (5, 6)
                and saved_id[0] == "storage" and isinstance(saved_id[1], _StorageType)
                and (len(saved_id) == 5 or saved_id[5] is None)):
            raise TorchCheckpointError(
                "Persistent ids should be ('storage', type, key, location, numel[, None]). "
                f"Received: {saved_id!r}"[:300])
        _, storage_type, key, _location, numel = saved_id[:5]
        return self.storage_for(str(key), storage_type, numel)


def _collect(storages):
    def storage_for(key, storage_type, numel):
        if key not in storages:
            storages[key] = _Storage(storage_type, numel)
        return storages[key]
    return storage_for


def _finish(obj, path):
    if not isinstance(obj, dict):
        raise TorchCheckpointError(
            f"The checkpoint should hold a dict of tensors (a state dict). Received: "
            f"{type(obj).__name__} in {path}")
    state = collections.OrderedDict()
    for name, value in obj.items():
        if not isinstance(value, _Tensor):
            raise TorchCheckpointError(
                f"Every entry of the state dict should be a tensor. Received: {name}="
                f"{type(value).__name__} in {path}")
        state[str(name)] = value.to_numpy()
    return state


def _load_legacy(handle, path):
    load = _RestrictedUnpickler  # the first three pickles hold only ints, strings and dicts
    if load(handle, None).load() != LEGACY_MAGIC:
        raise TorchCheckpointError(f"Not a torch checkpoint (wrong magic number). Received: {path}")
    protocol = load(handle, None).load()
    if protocol != LEGACY_PROTOCOL:
        raise TorchCheckpointError(
            f"Legacy torch checkpoints have protocol {LEGACY_PROTOCOL}. Received: {protocol}")
    system = load(handle, None).load()
    if not system.get("little_endian", True):
        raise TorchCheckpointError(f"Big-endian checkpoints are not supported. Received: {path}")
    storages = {}
    obj = _RestrictedUnpickler(handle, _collect(storages)).load()
    keys = load(handle, None).load()
    for key in keys:
        key = str(key)
        if key not in storages:
            raise TorchCheckpointError(f"A storage listed in the file is not used. Received: {key}")
        storage = storages[key]
        header = handle.read(8)
        if len(header) != 8:
            raise TorchCheckpointError(f"The file ends inside storage {key}. Received: {path}")
        (numel,) = struct.unpack("<q", header)
        if numel != storage.numel:
            raise TorchCheckpointError(
                f"Storage {key} should hold {storage.numel} elements. Received: {numel}")
        data = handle.read(numel * storage.dtype.itemsize)
        if len(data) != numel * storage.dtype.itemsize:
            raise TorchCheckpointError(f"The file ends inside storage {key}. Received: {path}")
        storage.array = np.frombuffer(data, dtype=storage.dtype)
    missing = sorted(set(storages) - {str(key) for key in keys})
    if missing:
        raise TorchCheckpointError(f"Storages used but not stored. Received: {missing[:5]}")
    return _finish(obj, path)


def _load_zip(path, label):
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pickles = [name for name in names if name.endswith("/data.pkl") and name.count("/") == 1]
        if len(pickles) != 1:
            raise TorchCheckpointError(
                f"A zip torch checkpoint holds one <name>/data.pkl. Received: {pickles}")
        prefix = pickles[0][: -len("data.pkl")]
        if prefix + "byteorder" in names and archive.read(prefix + "byteorder") != b"little":
            raise TorchCheckpointError(
                f"Big-endian checkpoints are not supported. Received: {label}")
        storages = {}
        obj = _RestrictedUnpickler(io.BytesIO(archive.read(pickles[0])), _collect(storages)).load()
        for key, storage in storages.items():
            data = archive.read(f"{prefix}data/{key}")
            if len(data) != storage.numel * storage.dtype.itemsize:
                raise TorchCheckpointError(
                    f"Storage {key} should hold {storage.numel} elements. Received: "
                    f"{len(data)} bytes")
            storage.array = np.frombuffer(data, dtype=storage.dtype)
    return _finish(obj, label)


def load_state_dict(path):
    """The tensors of the `torch.save` file at `path` (legacy or zip format).

    Args:
        path: a `.pth` / `.pt` file holding a state dict (a dict of tensors),
            or a seekable binary file object with its bytes.

    Returns:
        An `OrderedDict` of name -> numpy array, in the file's order, with
        torch's shapes (a conv kernel is `(O, I, kh, kw)`).

    Raises:
        TorchCheckpointError: not a torch checkpoint, not a dict of tensors,
            damaged, or it names a callable other than the few a state dict
            needs.
    """
    opened = hasattr(path, "read")
    label = "the given file object" if opened else str(path)
    try:
        if zipfile.is_zipfile(path):  # reads the end of the file only
            if opened:
                path.seek(0)
            return _load_zip(path, label)
        if opened:
            path.seek(0)
            return _load_legacy(path, label)
        with open(path, "rb") as handle:
            return _load_legacy(handle, label)
    except TorchCheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError, KeyError,
            IndexError, zipfile.BadZipFile) as error:
        raise TorchCheckpointError(
            f"Not a readable torch checkpoint ({error}). Received: {label}") from None
