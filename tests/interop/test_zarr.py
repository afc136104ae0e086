"""Zarr interop with zarr-python (v2 and v3 arrays), both ways.

- zarr opens feedbench's arrays (v2: none, zstd, gzip, blosc; v3: the same, with crc32c, and
  sharded) and every sample (a row of the array) is the one feedbench wrote: header fields and
  payload CRC32C checked independently.
- feedbench reads zarr's arrays: feedbench's own rewritten by zarr with other codecs, chunkings
  and shards, read back with verify = true (every byte checked); an array of zarr's own (float32,
  3-D, chunks of fill values left unwritten) with its exact sample count and bytes.
- damage is named: a flipped byte of a chunk with crc32c, a shard index that points outside
  the shard, a chunk shape feedbench does not read.
"""

import json
import shutil
import struct

import crc32c
import numpy as np
import pytest
import zarr
import zarr.codecs as zc
from numcodecs import GZip, Zstd
from numcodecs import Blosc as NBlosc

SAMPLE_MAGIC = 0x31534246  # "FBS1"
N, L = 10, 2000


def sections(data, **zarr_keys):
    s = {
        "dataset": {
            "data_dir": str(data),
            "format": "zarr",
            "num_files_train": 2,
            "num_samples_per_file": N,
            "record_length_bytes": L,
            "file_access": "per_rank",
            "verify": "true",
            "seed": 5,
        },
        "format.zarr": {"version": 3, "chunk_samples": 3},
    }
    s["format.zarr"].update(zarr_keys)
    return s


def check_sample(buf, file_index, sample_index):
    magic, crc, _seed, _dsid, fidx, length, sidx = struct.unpack_from("<IIQQIIQ", buf, 0)
    assert magic == SAMPLE_MAGIC
    assert (fidx, sidx, length) == (file_index, sample_index, len(buf))
    assert crc == crc32c.crc32c(bytes(buf[40:]))


GENERATED = [  # uncompressed chunks: tests/formats (zarr_corrupt) and the rewrites below
    {"version": 2, "codec": "zstd"},
    {"version": 2, "codec": "gzip"},
    {"version": 2, "codec": "blosc"},
    {"version": 3, "codec": "blosc", "crc32c": "true"},
    {"version": 3, "codec": "zstd", "shard_chunks": 2},
    {"version": 3, "codec": "gzip", "shard_chunks": 4, "crc32c": "true"},
]


def test_zarr_reads_feedbench(feedbench, tmp_path):
    for k, keys in enumerate(GENERATED):
        data = tmp_path / ("data%d" % k)
        r = feedbench(sections(data, **keys), cmd="generate")
        assert r.rc == 0, r.output
        arrays = sorted(data.glob("*.zarr"))
        assert len(arrays) == 2
        for f, path in enumerate(arrays):
            a = zarr.open_array(str(path), mode="r")
            assert a.metadata.zarr_format == keys["version"]
            assert a.shape == (N, L) and a.dtype == np.uint8
            assert a.chunks == (3, L)
            if "shard_chunks" in keys:
                assert a.shards == (3 * keys["shard_chunks"], L)
            x = a[:]
            for i in range(N):
                check_sample(x[i].tobytes(), f, i)


def compressors(version, name):
    if version == 2:
        return {"blosc": NBlosc(cname="zstd", clevel=3, shuffle=NBlosc.BITSHUFFLE),
                "zstd": Zstd(level=2), "gzip": GZip(level=4), "none": None}[name]
    return {"blosc": zc.BloscCodec(cname="lz4", clevel=5, shuffle=zc.BloscShuffle.shuffle),
            "zstd": zc.ZstdCodec(level=2), "gzip": zc.GzipCodec(level=4), "none": None}[name]


REWRITES = [
    (2, "blosc", 1, None, False),
    (2, "zstd", 5, None, False),
    (2, "gzip", N, None, False),
    (3, "none", 2, None, False),
    (3, "blosc", 1, None, True),
    (3, "zstd", 2, 4, False),
    (3, "gzip", 1, 3, True),
]


@pytest.mark.parametrize("version", [2, 3])
def test_zarr_rewrite_verifies(feedbench, tmp_path, version):
    """Each array rewritten by zarr with another codec, chunk and shard shape, then read back
    by feedbench with verify = true at 2 ranks."""
    data = tmp_path / "data"
    rewrites = [w for w in REWRITES if w[0] == version]
    over = {"dataset": {"num_files_train": len(rewrites)}}
    s = sections(data, version=version)
    s["dataset"].update(over["dataset"])
    r = feedbench(s, cmd="generate")
    assert r.rc == 0, r.output
    for path, (_, codec, chunk, shard, crc) in zip(sorted(data.glob("*.zarr")), rewrites):
        x = zarr.open_array(str(path), mode="r")[:]
        shutil.rmtree(path)
        comp = compressors(version, codec)
        kw = {"compressors": comp} if comp is not None else {"compressors": None}
        if version == 3 and crc:
            kw["compressors"] = [c for c in [comp, zc.Crc32cCodec()] if c is not None]
        if shard:
            kw["shards"] = (chunk * shard, L)
        a = zarr.create_array(store=str(path), shape=x.shape, chunks=(chunk, L), dtype="uint8",
                              zarr_format=version, fill_value=0, **kw)
        a[:] = x
    s["dataset"]["generate"] = "never"
    r = feedbench(s, ranks=2)
    assert r.rc == 0, r.output
    assert r.metric["train_samples"] == N * len(rewrites)


def test_zarr_array_of_its_own(feedbench, tmp_path):
    """float32 of shape (12, 4, 5), chunks of 5 samples, the middle chunk all zeros (not
    written by zarr): 12 samples of 80 bytes."""
    data = tmp_path / "data"
    data.mkdir()
    x = np.arange(12 * 20, dtype=np.float32).reshape(12, 4, 5) + 1
    x[5:10] = 0
    a = zarr.create_array(store=str(data / "own.zarr"), shape=x.shape, chunks=(5, 4, 5),
                          dtype="float32", compressors=zc.ZstdCodec(level=1))
    a[:] = x
    assert not (data / "own.zarr" / "c" / "1").exists()  # the chunk of zeros is not stored
    b = zarr.create_array(store=str(data / "v2.zarr"), shape=(7, 3), chunks=(2, 3),
                          dtype="<i8", zarr_format=2, compressors=GZip(level=1))
    b[:] = np.arange(21).reshape(7, 3)
    r = feedbench({"dataset": {"data_dir": str(data), "format": "zarr", "generate": "never",
                               "verify": "false", "num_files_train": 2}})
    assert r.rc == 0, r.output
    disc = r.summary["format"]["discovered"]
    assert disc["samples"] == 12 + 7
    assert disc["bytes"] == 12 * 80 + 7 * 24
    assert r.metric["train_samples"] == 19
    assert "zarr v3: 12 samples of 80 bytes, chunks of 5 samples, zstd" in json.dumps(disc)


def test_damage_is_named(feedbench, tmp_path):
    data = tmp_path / "data"
    keys = {"codec": "none", "crc32c": "true"}
    r = feedbench(sections(data, **keys), cmd="generate")
    assert r.rc == 0, r.output
    victim = sorted(data.glob("*.zarr"))[1]
    chunk = victim / "c" / "1" / "0"
    blob = chunk.read_bytes()
    chunk.write_bytes(blob[:100] + bytes([blob[100] ^ 1]) + blob[101:])
    s = sections(data, **keys)
    s["dataset"]["generate"] = "never"
    r = feedbench(s)
    assert r.rc == 1
    assert f"bad zarr chunk '{chunk}': chunk CRC32C mismatch at offset 0" in r.output
    chunk.write_bytes(blob)

    keys = {"codec": "zstd", "shard_chunks": 2}
    data2 = tmp_path / "data2"
    r = feedbench(sections(data2, **keys), cmd="generate")
    assert r.rc == 0, r.output
    shard = sorted(data2.glob("*.zarr"))[0] / "c" / "0" / "0"
    blob = bytearray(shard.read_bytes())
    ib = len(blob) - 2 * 16 - 4
    blob[ib + 16: ib + 24] = struct.pack("<Q", len(blob))  # chunk 1 starts past the data
    blob[-4:] = struct.pack("<I", crc32c.crc32c(bytes(blob[ib:-4])))
    shard.write_bytes(bytes(blob))
    s = sections(data2, **keys)
    s["dataset"]["generate"] = "never"
    r = feedbench(s)
    assert r.rc == 1
    assert (f"bad zarr shard '{shard}': shard index entry 1 (offset {len(blob)}") in r.output
    assert f"at offset {ib}" in r.output

    own = tmp_path / "own"
    own.mkdir()
    a = zarr.create_array(store=str(own / "x.zarr"), shape=(4, 6), chunks=(2, 3), dtype="u1")
    a[:] = 1
    r = feedbench({"dataset": {"data_dir": str(own), "format": "zarr", "generate": "never",
                               "verify": "false", "num_files_train": 1}})
    assert r.rc == 1
    assert "chunked along axis 1 (3 of 6): only chunks along the sample axis are read" in r.output
