"""wds: feedbench's shards open in tarfile and webdataset (keys, members, sizes); shards
written by webdataset.TarWriter and tarfile (PAX headers, long names, directories) are read
by feedbench with the right samples and bytes."""
import io
import os
import random
import tarfile

import pytest
import webdataset

from conftest import header_fields

GEN = {"format": "wds", "num_files_train": 2, "num_samples_per_file": 6,
       "record_length_bytes": 3000, "record_length_bytes_stdev": 700, "verify": "true"}


def test_feedbench_shards_open_in_tarfile_and_webdataset(feedbench, tmp_path):
    data = tmp_path / "data"
    r = feedbench({"dataset": dict(GEN, data_dir=data)}, ranks=2)
    assert r.rc == 0
    shards = sorted(data.glob("*.tar"))
    assert len(shards) == 2
    for s, shard in enumerate(shards):
        with tarfile.open(shard) as t:
            members = t.getmembers()
            names = [m.name for m in members]
            keys = ["sample%08d" % (s * 6 + i) for i in range(6)]
            assert names == [k + ext for k in keys for ext in (".bin", ".cls")]
            payload = {}
            for m in members:
                data_bytes = t.extractfile(m).read()
                assert len(data_bytes) == m.size
                if m.name.endswith(".bin"):
                    magic, length, index = header_fields(data_bytes)
                    assert magic == b"FBS1" and length == m.size
                    assert index == keys.index(m.name[:-4])
                    payload[m.name[:-4]] = data_bytes
                else:
                    assert data_bytes.decode().isdigit()
        samples = list(webdataset.WebDataset(str(shard), shardshuffle=False))
        assert [x["__key__"] for x in samples] == keys
        for x in samples:
            assert x["bin"] == payload[x["__key__"]]
            assert int(x["cls"]) == int(x["__key__"][6:]) % 1000
    assert r.metric["train_samples"] == 12


def tarwriter_shard(path, nsamples, seed, exts=("bin", "cls"), long_key=False):
    """Writes a shard with webdataset.TarWriter; returns the bytes feedbench should return
    per sample (the .bin, else all members)."""
    rnd = random.Random(seed)
    sizes = []
    with webdataset.TarWriter(str(path)) as sink:
        for i in range(nsamples):
            key = "s%05d_%d" % (i, seed)
            if long_key and i == 1:
                key = "k" * 150 + key  # longer than ustar's 100-byte name: a PAX path
            sample = {"__key__": key}
            total = 0
            for ext in exts:
                if ext == "cls":
                    sample[ext] = i
                    n = len(str(i))
                else:
                    n = rnd.randint(100, 5000)
                    sample[ext] = rnd.randbytes(n)
                total += n
                if ext == "bin":
                    bin_size = n
            sink.write(sample)
            sizes.append(bin_size if "bin" in exts else total)
    return sizes


def test_tarwriter_shards_read_by_feedbench(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    sizes = tarwriter_shard(data / "a.tar", 7, 1, long_key=True)
    sizes += tarwriter_shard(data / "b.tar", 5, 2)
    total = sum(os.path.getsize(p) for p in data.glob("*.tar"))
    # TarWriter marks every member with a PAX header (its mtimes are floats)
    with open(data / "a.tar", "rb") as f:
        assert f.read(512)[156:157] == b"x"
    r = feedbench({"dataset": {"data_dir": data, "format": "wds", "generate": "never",
                               "verify": "false"},
                   "train": {"epochs": 2}})
    assert r.rc == 0
    assert r.discovered["samples"] == 12
    assert r.discovered["bytes"] == sum(sizes)
    assert r.discovered["largest_sample_bytes"] == max(sizes)
    assert "PAX headers" in r.discovered["first_files"][0]["detail"]
    assert r.metric["train_samples"] == 2 * 12
    # one stream read per shard (shards are smaller than the 1 MiB stream buffer)
    assert r.metric["train_bytes_read"] == 2 * total
    assert r.metric["train_read_ops"] == 2 * 2


def test_shard_without_bin_members(feedbench, tmp_path):
    """No .bin member: a sample is all its members' data, in tar order."""
    data = tmp_path / "data"
    data.mkdir()
    sizes = tarwriter_shard(data / "c.tar", 4, 3, exts=("jpg", "json", "cls"))
    r = feedbench({"dataset": {"data_dir": data, "format": "wds", "generate": "never",
                               "verify": "false"}})
    assert r.rc == 0
    assert r.discovered["samples"] == 4
    assert r.discovered["bytes"] == sum(sizes)
    assert r.metric["train_samples"] == 4


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT])
def test_rewritten_shards_verify(feedbench, tmp_path, fmt):
    """feedbench's shards rewritten by Python's tarfile (PAX or GNU headers, a directory entry,
    extra members, names longer than 100 bytes) read back with verify = true, with a small
    stream buffer and the shuffle window, so seeking back is exercised."""
    data = tmp_path / "data"
    sections = {"dataset": dict(GEN, data_dir=data),
                "reader": {"sample_shuffle": "seed", "batch_size": 2},
                "format.wds": {"shuffle_buffer": 4},
                "storage": {"transfer_size": 4096}}
    assert feedbench(sections, cmd="generate").rc == 0
    for shard in sorted(data.glob("*.tar")):
        with tarfile.open(shard) as t:
            members = [(m, t.extractfile(m).read()) for m in t.getmembers()]
        os.unlink(shard)
        with tarfile.open(shard, "w", format=fmt) as out:
            d = tarfile.TarInfo("dir" + "/d" * 80)
            d.type = tarfile.DIRTYPE
            out.addfile(d)
            for m, b in members:
                m.pax_headers = {"comment": "rewritten"} if fmt == tarfile.PAX_FORMAT else {}
                m.name = d.name + "/" + m.name  # the key keeps its folder
                out.addfile(m, io.BytesIO(b))
                if m.name.endswith(".cls"):
                    extra = tarfile.TarInfo(m.name[:-4] + ".txt")
                    extra.size = 3
                    out.addfile(extra, io.BytesIO(b"abc"))
            readme = tarfile.TarInfo("README")  # no extension: not part of any sample
            readme.size = 2
            out.addfile(readme, io.BytesIO(b"hi"))
    sections["dataset"]["generate"] = "never"
    r = feedbench(sections, ranks=2)
    assert r.rc == 0
    assert r.metric["train_samples"] == 12
