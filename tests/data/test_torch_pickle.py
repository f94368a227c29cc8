"""The numpy torch-checkpoint reader on legacy and zip files made here, and on hostile ones.

Without torch, the files are written with stand-ins whose pickled names are
then rewritten to torch's (protocol 2 names globals as `c<module>\\n<name>\\n`).
"""

import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

from kseq.layers.pretrained.torch_pickle import LEGACY_MAGIC, TorchCheckpointError, load_state_dict


class FloatStorage:  # pickled by name, renamed to torch.FloatStorage
    pass


class LongStorage:  # pickled by name, renamed to torch.LongStorage
    pass


def _rebuild_tensor_v2(*args):  # pickled by name, renamed to torch._utils._rebuild_tensor_v2
    raise AssertionError("never called: the file names torch's")


class Tensor:
    def __init__(self, key, offset, size, stride):
        self.args = key, offset, size, stride

    def __reduce__(self):
        key, offset, size, stride = self.args
        return _rebuild_tensor_v2, (StorageRef(key), offset, size, stride, False,
                                    collections.OrderedDict())


class StorageRef:
    def __init__(self, key):
        self.key = key


STORAGES = {  # key -> (stand-in type, flat array)
    "0": (FloatStorage, np.arange(12, dtype="<f4")),
    "1": (LongStorage, np.array([7], dtype="<i8")),
}
STATE = collections.OrderedDict([
    ("conv.weight", Tensor("0", 0, (2, 3), (1, 2))),  # a transposed (column-major) view
    ("conv.bias", Tensor("0", 6, (3,), (2,))),  # strided, at an offset, shares storage 0
    ("bn.num_batches_tracked", Tensor("1", 0, (), ())),
])
EXPECTED = {"conv.weight": np.arange(6, dtype="f4").reshape(3, 2).T,
            "conv.bias": np.array([6, 8, 10], "f4"), "bn.num_batches_tracked": np.array(7)}


def torch_pickle(obj, legacy):
    class Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if not isinstance(value, StorageRef):
                return None
            storage_type, array = STORAGES[value.key]
            saved = ("storage", storage_type, value.key, "cpu", array.size)
            return saved + (None,) if legacy else saved

    buffer = io.BytesIO()
    Pickler(buffer, protocol=2).dump(obj)
    data = buffer.getvalue()
    here = __name__.encode()
    for name, module in ((b"FloatStorage", b"torch"), (b"LongStorage", b"torch"),
                         (b"_rebuild_tensor_v2", b"torch._utils")):
        data = data.replace(b"c%s\n%s\n" % (here, name), b"c%s\n%s\n" % (module, name))
    assert here not in data
    return data


def legacy_file(path, obj=STATE, cut=0):
    with open(path, "wb") as handle:
        for header in (LEGACY_MAGIC, 1001, {"protocol_version": 1001, "little_endian": True}):
            pickle.dump(header, handle, protocol=2)
        handle.write(torch_pickle(obj, legacy=True))
        pickle.dump(list(STORAGES), handle, protocol=2)
        for _, array in STORAGES.values():
            handle.write(struct.pack("<q", array.size) + array.tobytes())
        if cut:
            handle.truncate(handle.tell() - cut)
    return path


def zip_file(path):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("model/data.pkl", torch_pickle(STATE, legacy=False))
        archive.writestr("model/byteorder", "little")
        for key, (_, array) in STORAGES.items():
            archive.writestr(f"model/data/{key}", array.tobytes())
    return path


@pytest.mark.parametrize("make", [legacy_file, zip_file])
def test_reads_views_offsets_and_scalars(tmp_path, make):
    state = load_state_dict(make(str(tmp_path / "model.pth")))
    assert list(state) == list(EXPECTED)
    for name, expected in EXPECTED.items():
        np.testing.assert_array_equal(state[name], expected)
        assert state[name].dtype == expected.dtype and state[name].flags.c_contiguous
    with open(tmp_path / "model.pth", "rb") as handle:  # a file object works too
        assert list(load_state_dict(io.BytesIO(handle.read()))) == list(EXPECTED)


class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_refuses_to_run_code_and_explains(tmp_path):
    marker = tmp_path / "ran"
    path = legacy_file(str(tmp_path / "evil.pth"),
                       collections.OrderedDict([("w", Payload(marker))]))
    with pytest.raises(TorchCheckpointError, match=r"will not run.*Received: (posix|nt)\.system"):
        load_state_dict(path)
    assert not marker.exists()
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as archive:
        archive.writestr("m/data.pkl", pickle.dumps(Payload(marker), protocol=2))
    with pytest.raises(TorchCheckpointError, match="will not run"):
        load_state_dict(str(tmp_path / "evil.zip"))
    assert not marker.exists()


def test_damaged_or_foreign_files_give_one_clear_error(tmp_path):
    with pytest.raises(TorchCheckpointError, match="ends inside storage"):
        load_state_dict(legacy_file(str(tmp_path / "cut.pth"), cut=3))
    with pytest.raises(TorchCheckpointError, match="dict of tensors.*Received: list"):
        load_state_dict(legacy_file(str(tmp_path / "list.pth"), list(STATE.values())))
    (tmp_path / "text.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(TorchCheckpointError, match="Received: .*text.pth"):
        load_state_dict(str(tmp_path / "text.pth"))
