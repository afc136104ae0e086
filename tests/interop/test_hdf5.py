"""HDF5 interop: feedbench's .h5 files open in h5py with the documented layout (records,
labels, lengths) and the exact sample bytes; files written by h5py (contiguous, chunked, gzip,
a 3-D float dataset under another name) are read by feedbench; a deleted dataset, a truncated
file and a flipped payload byte give clear errors.

feedbench runs through the `feedbench` fixture of conftest.py.
"""

import os
import struct

import crc32c
import h5py
import numpy as np
import pytest

SAMPLE_MAGIC = 0x31534246  # "FBS1"


def sections(data, **over):
    """A small verified dataset: 2 files x 8 samples of 2048 bytes, contiguous."""
    s = {
        "dataset": {
            "data_dir": str(data),
            "format": "hdf5",
            "num_files_train": 2,
            "num_samples_per_file": 8,
            "record_length_bytes": 2048,
            "record_length_bytes_stdev": 0,
            "file_access": "per_rank",
            "verify": "true",
            "seed": 11,
        },
        "format.hdf5": {"chunking": "none", "transfer": "independent"},
        "reader": {"read_threads": 2},
    }
    for sec, kv in over.items():
        s.setdefault(sec.replace("_", "."), {}).update(kv)
    return s


def check_sample(buf, file_index, sample_index):
    magic, crc, _seed, _dsid, fidx, length, sidx = struct.unpack_from("<IIQQIIQ", buf, 0)
    assert magic == SAMPLE_MAGIC
    assert (fidx, sidx) == (file_index, sample_index)
    assert length == len(buf)
    assert crc == crc32c.crc32c(bytes(buf[40:]))


LAYOUTS = [
    # chunking, stdev, ranks, access, transfer
    ("none", 0, 1, "per_rank", "independent"),
    ("sample", 300, 1, "per_rank", "independent"),
    ("3", 300, 2, "shared", "independent"),
    ("none", 0, 2, "shared", "collective"),
]


@pytest.mark.parametrize("chunking,stdev,ranks,access,transfer", LAYOUTS)
def test_feedbench_files_open_in_h5py(
    feedbench, tmp_path, chunking, stdev, ranks, access, transfer
):
    data = tmp_path / "data"
    r = feedbench(
        sections(
            data,
            dataset={"record_length_bytes_stdev": stdev, "file_access": access},
            format_hdf5={"chunking": chunking, "transfer": transfer},
        ),
        ranks=ranks,
    )
    assert r.rc == 0, r.output
    files = sorted(data.glob("*.h5"))
    assert len(files) == 2
    first = 0
    for fidx, path in enumerate(files):
        with h5py.File(path, "r") as f:
            rec, lab = f["records"], f["labels"]
            assert rec.dtype == np.uint8 and rec.ndim == 2 and rec.shape[0] == 8
            assert lab.dtype == np.int64 and lab.shape == (8,)
            assert list(lab[:]) == list(range(first, first + 8))
            if chunking == "none":
                assert rec.chunks is None
            else:
                rows = 1 if chunking == "sample" else int(chunking)
                assert rec.chunks == (rows, rec.shape[1])
            if stdev:
                lengths = f["lengths"][:]
                assert lengths.dtype == np.int64
                assert rec.shape[1] == lengths.max()
            else:
                assert "lengths" not in f
                lengths = np.full(8, 2048)
                assert rec.shape[1] == 2048
            for i in range(8):
                row = rec[i]
                check_sample(row[: lengths[i]].tobytes(), fidx, i)
                assert not row[lengths[i] :].any()  # padding is zeros
        first += 8
    s = r.summary
    info = s["format"]["hdf5"]
    assert info["driver"] == ("mpio" if access == "shared" else "sec2")
    if transfer == "collective":
        # HDF5 reports what it did: the contiguous dataset was read collectively.
        assert info["actual_io_mode"] == "contiguous_collective"
        assert info["no_collective_cause"] == "none"
    total = sum(int(np.sum(h5py.File(p, "r")["lengths"][:])) if stdev else 8 * 2048 for p in files)
    # Bytes are what the library really read (kernel counters): at least every sample's bytes,
    # at most whole chunks per sample plus metadata.
    rows = 1 if chunking in ("none", "sample") else int(chunking)
    disk = sum(os.path.getsize(p) for p in files)
    assert total <= s["metric"]["train_bytes_read"] <= rows * disk + 65536 * len(files)
    assert sum(e["samples"] for e in s["epochs"]) == 8 * len(files)


def write_h5py(path, kind):
    """Files as users write them; returns (samples, bytes per sample)."""
    rng = np.random.default_rng(3)
    with h5py.File(path, "w") as f:
        if kind == "contiguous":
            f.create_dataset("records", data=rng.integers(0, 255, (10, 700), dtype=np.uint8))
            f.create_dataset("labels", data=np.arange(10, dtype=np.int64))
            return 10, 700
        if kind == "chunked":
            f.create_dataset(
                "records", data=rng.integers(0, 255, (12, 500), dtype=np.uint8), chunks=(4, 500)
            )
            return 12, 500
        if kind == "gzip":
            f.create_dataset(
                "records",
                data=rng.integers(0, 4, (9, 800), dtype=np.uint8),
                chunks=(1, 800),
                compression="gzip",
            )
            return 9, 800
        if kind == "other_name_3d":
            f.create_dataset("a_labels", data=np.arange(6))
            f.create_dataset("x", data=rng.random((6, 8, 8), dtype=np.float32))
            return 6, 8 * 8 * 4
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["contiguous", "chunked", "gzip", "other_name_3d"])
def test_h5py_files_read_by_feedbench(feedbench, tmp_path, kind):
    data = tmp_path / "data"
    data.mkdir()
    n0, size = write_h5py(data / "a.h5", kind)
    n1, _ = write_h5py(data / "b.hdf5", kind)
    r = feedbench(
        sections(data, dataset={"generate": "never", "verify": "false"}, train={"epochs": 2})
    )
    assert r.rc == 0, r.output
    s = r.summary
    disc = s["format"]["discovered"]
    assert disc["files"] == 2
    assert disc["samples"] == n0 + n1
    assert disc["bytes"] == (n0 + n1) * size
    assert disc["largest_sample_bytes"] == size
    detail = disc["first_files"][0]["detail"]
    assert ("'x' float32 (6, 8, 8)" if kind == "other_name_3d" else "'records' uint8") in detail
    if kind == "gzip":
        assert "deflate" in detail
    # What HDF5 really read: every sample, for chunked and gzip files whole (compressed) chunks.
    disk = os.path.getsize(data / "a.h5") + os.path.getsize(data / "b.hdf5")
    got = s["metric"]["train_bytes_read"]
    if kind == "gzip":
        assert 0 < got <= 2 * (n0 + n1) * disk
    else:
        assert 2 * (n0 + n1) * size <= got <= 2 * (n0 + n1) * disk
    assert sum(e["samples"] for e in s["epochs"]) == 2 * (n0 + n1)


def test_h5py_file_read_collectively_by_two_ranks(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    n, size = write_h5py(data / "a.h5", "gzip")
    r = feedbench(
        sections(
            data,
            dataset={"generate": "never", "verify": "false", "file_access": "shared",
                     "num_files_train": 1},
            format_hdf5={"transfer": "collective"},
        ),
        ranks=2,
    )
    assert r.rc == 0, r.output
    s = r.summary
    # gzip chunks: the compressed bytes of the chunks, read by the two ranks' collective calls.
    assert 0 < s["metric"]["train_bytes_read"] <= n * os.path.getsize(data / "a.h5")
    assert s["format"]["hdf5"]["transfer"] == "collective"


def generate(feedbench, data):
    """Generates sections(data); returns the sections to read it back and its files."""
    r = feedbench(sections(data), cmd="generate")
    assert r.rc == 0, r.output
    return sections(data, dataset={"generate": "never"}), sorted(data.glob("*.h5"))


def test_deleted_records_dataset(feedbench, tmp_path):
    cfg, files = generate(feedbench, tmp_path / "data")
    with h5py.File(files[1], "a") as f:
        del f["records"]
    r = feedbench(cfg)
    assert r.rc == 1, r.output
    assert f"hdf5: dataset 'records' missing in '{files[1]}'" in r.output


def test_truncated_file(feedbench, tmp_path):
    cfg, files = generate(feedbench, tmp_path / "data")
    os.truncate(files[0], os.path.getsize(files[0]) // 2)
    r = feedbench(cfg)
    assert r.rc == 1, r.output
    assert f"hdf5: cannot open '{files[0]}': truncated file" in r.output


def test_flipped_payload_byte(feedbench, tmp_path):
    cfg, files = generate(feedbench, tmp_path / "data")
    with h5py.File(files[1], "r") as f:
        base = f["records"].id.get_offset()
        row = f["records"].shape[1]
    with open(files[1], "r+b") as f:
        f.seek(base + 5 * row + 1000)
        b = f.read(1)
        f.seek(base + 5 * row + 1000)
        f.write(bytes([b[0] ^ 0x01]))
    r = feedbench(cfg)
    assert r.rc == 1, r.output
    assert "verification failed" in r.output
    assert f"'{files[1]}' sample 5, byte 1000 of the sample" in r.output


def test_direct_io_refused(feedbench, tmp_path):
    """HDF5 has no O_DIRECT driver here: refused before any file is touched."""
    data = tmp_path / "data"
    r = feedbench(sections(data, storage={"direct": "true"}))
    assert r.rc == 2, r.output
    assert "format hdf5 cannot be read with direct = true" in r.output
    assert "no O_DIRECT driver" in r.output
    assert not data.exists()
