"""mds: MosaicML Streaming's StreamingDataset reads feedbench's shards (every sample's bytes
and label), feedbench reads what MDSWriter writes (bytes, int, str and ndarray columns, several
shards), and a shard past the 4 GiB its 32-bit offsets address is refused."""
import json
import os
import struct

import crc32c
import numpy as np
from streaming import MDSWriter, StreamingDataset

from conftest import header_fields


def test_streaming_reads_feedbench_shards(feedbench, tmp_path):
    data = tmp_path / "data"
    r = feedbench({"dataset": {"data_dir": data, "format": "mds", "num_files_train": 3,
                               "num_samples_per_file": 5, "record_length_bytes": 3000,
                               "record_length_bytes_stdev": 700, "verify": "true"}}, ranks=2)
    assert r.rc == 0
    index = json.load(open(data / "index.json"))
    assert index["version"] == 2 and len(index["shards"]) == 3
    for s in index["shards"]:
        assert os.path.getsize(data / s["raw_data"]["basename"]) == s["raw_data"]["bytes"]
    ds = StreamingDataset(local=str(data), shuffle=False, batch_size=1)
    assert len(ds) == 15
    for i in range(len(ds)):
        sample = ds[i]
        magic, length, index_in_file = header_fields(sample["data"])
        assert magic == b"FBS1" and length == len(sample["data"])
        assert index_in_file == i % 5 and sample["label"] == i
        assert struct.unpack("<I", sample["data"][4:8])[0] == crc32c.crc32c(sample["data"][40:])
    # a sample read is its row: the size of the data column, the data, the label
    assert r.metric["train_samples"] == 15
    rows = sum(s["raw_data"]["bytes"] for s in index["shards"])
    assert r.metric["train_bytes_read"] < rows


def test_mdswriter_shards_read_by_feedbench(feedbench, tmp_path):
    data = tmp_path / "data"
    cols = {"img": "bytes", "cls": "int", "name": "str", "emb": "ndarray:float32"}
    rng = np.random.default_rng(2)
    with MDSWriter(out=str(data), columns=cols, size_limit=4096) as w:
        for i in range(40):
            w.write({"img": rng.bytes(100 + 7 * i), "cls": i, "name": "s%d" % i,
                     "emb": rng.random(3 + i % 4, dtype=np.float32)})
    index = json.load(open(data / "index.json"))
    shards = [s["raw_data"]["basename"] for s in index["shards"]]
    assert len(shards) > 2
    r = feedbench({"dataset": {"data_dir": data, "format": "mds", "generate": "never",
                               "verify": "false"}, "train": {"epochs": 2}})
    assert r.rc == 0
    assert r.metric["train_samples"] == 80
    found = {f["file"]: f for f in r.discovered["first_files"]}
    for s in index["shards"]:
        name = s["raw_data"]["basename"]
        if name in found:
            assert found[name]["samples"] == s["samples"]
            assert found[name]["detail"].startswith("mds v2, %d samples, 4 columns" % s["samples"])
    # every row read once per epoch, its byte range only
    rows = 0
    for name in shards:
        with open(data / name, "rb") as f:
            n = struct.unpack("<I", f.read(4))[0]
            offs = struct.unpack("<%dI" % (n + 1), f.read(4 * (n + 1)))
        rows += offs[-1] - offs[0]
    assert r.metric["train_bytes_read"] == 2 * rows


def test_shard_over_4_gib_refused(feedbench, tmp_path):
    data = tmp_path / "data"
    r = feedbench({"dataset": {"data_dir": data, "format": "mds", "num_files_train": 1,
                               "num_samples_per_file": 5, "record_length_bytes": "1GiB",
                               "verify": "false"}}, cmd="generate")
    assert r.rc == 2
    assert "bytes: MDS addresses a shard with 32-bit offsets (at most 4 GiB - 1)" in r.output
    assert not list(data.glob("*.mds")) if data.exists() else True
