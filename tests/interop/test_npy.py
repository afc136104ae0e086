"""npy: feedbench's files open in numpy; files numpy writes (v1, v2, v3 headers, any dtype,
either order) are read by feedbench with the right sample count and byte count."""
import os

import numpy as np
import pytest

from conftest import header_fields


def npy_data_offset(path):
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            hlen = int.from_bytes(f.read(2), "little")
            return version, 10 + hlen
        return version, 12 + int.from_bytes(f.read(4), "little")


def test_feedbench_npy_opens_in_numpy(feedbench, tmp_path):
    data = tmp_path / "data"
    r = feedbench({"dataset": {"data_dir": data, "format": "npy", "num_files_train": 4,
                               "num_samples_per_file": 3, "record_length_bytes": 3000,
                               "record_length_bytes_stdev": 700, "verify": "true"}}, ranks=2)
    assert r.rc == 0
    files = sorted(data.glob("*.npy"))
    assert len(files) == 12  # num_files_train x num_samples_per_file
    total = 0
    for path in files:
        a = np.load(path)
        assert a.dtype == np.uint8 and a.ndim == 1
        magic, length, index = header_fields(a.tobytes())
        assert magic == b"FBS1" and length == a.size and index == 0
        version, off = npy_data_offset(path)
        assert version == (1, 0) and off % 64 == 0
        assert os.path.getsize(path) == off + a.size
        total += os.path.getsize(path)
    # a sample read is the header read plus the data read: the whole file, once
    assert r.metric["train_samples"] == 12
    assert r.metric["train_bytes_read"] == total


def expected_bytes(path):
    """What feedbench reads of one file: a first read of up to 128 bytes, the rest of a
    longer header, then the data."""
    _, off = npy_data_offset(path)
    size = os.path.getsize(path)
    return min(128, size) + max(0, off - 128) + (size - off)


def write(path, array, version=None):
    if version is None:
        np.save(path, array)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version)


CASES = [
    ("a_f32_v1.npy", lambda: np.arange(60, dtype="<f4").reshape(3, 4, 5), None, "npy v1.0 <f4 (3, 4, 5)"),
    ("b_i16_fortran.npy", lambda: np.asfortranarray(np.arange(63, dtype="<i2").reshape(7, 9)), None,
     "npy v1.0 <i2 (7, 9) fortran"),
    ("c_u8_v2.npy", lambda: np.arange(1000, dtype=np.uint8), (2, 0), "npy v2.0 |u1 (1000,)"),
    ("d_unicode_v3.npy", lambda: np.array(["ab", "cde", "f"]), (3, 0), "npy v3.0 <U3 (3,)"),
    ("e_long_header.npy", lambda: np.zeros((1,) * 30 + (5,), dtype="<f8"), None, "npy v1.0 <f8"),
    ("f_structured.npy", lambda: np.zeros(4, dtype=[("a", "<i4"), ("b", "<f8", (2,))]), None,
     "npy v1.0 [structured] (4,)"),
]


def test_numpy_npy_read_by_feedbench(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    expected = 0
    for name, make, version, _ in CASES:
        write(data / name, make(), version)
        expected += expected_bytes(data / name)
    # the long shape needs a header longer than one 128-byte read
    assert npy_data_offset(data / "e_long_header.npy")[1] > 128
    r = feedbench({"dataset": {"data_dir": data, "format": "npy", "generate": "never",
                               "verify": "false"},
                   "train": {"epochs": 2}})
    assert r.rc == 0
    assert r.metric["train_samples"] == 2 * len(CASES)
    assert r.metric["train_bytes_read"] == 2 * expected
    found = {f["file"]: f for f in r.discovered["first_files"]}
    for name, make, _, detail in CASES:
        assert found[name]["samples"] == 1
        assert found[name]["bytes"] == make().nbytes
        assert found[name]["detail"].startswith(detail)


def test_object_array_refused(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    r = feedbench({"dataset": {"data_dir": data, "format": "npy", "generate": "never",
                               "verify": "false"}})
    assert r.rc == 1
    assert "bad NPY header in '%s'" % (data / "obj.npy") in r.output
    assert "object arrays" in r.output


def test_header_lying_about_shape(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "x.npy", np.zeros(100, dtype=np.uint8))
    with open(data / "x.npy", "ab") as f:
        f.write(b"\0" * 3904)  # 4004 data bytes for a shape of (100,)
    _, off = npy_data_offset(data / "x.npy")
    r = feedbench({"dataset": {"data_dir": data, "format": "npy", "generate": "never",
                               "verify": "false"}})
    assert r.rc == 1
    assert ("bad NPY header in '%s': shape (100,) × 1 bytes does not match 4004 data bytes "
            "at offset %d" % (data / "x.npy", off)) in r.output
