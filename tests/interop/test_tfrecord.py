"""TFRecord interop: feedbench's files read by the `tfrecord` Python package (with feedbench's
index files) and by an independent framing check (crc32c package); files written by
tfrecord.writer.TFRecordWriter (+ tfrecord2idx) read by feedbench; corruption gives
TensorFlow's messages ("corrupted record at OFFSET", "truncated record at OFFSET").

feedbench runs through the `feedbench` fixture of conftest.py.
"""

import os
import struct

import crc32c
import pytest
from tfrecord.reader import tfrecord_loader
from tfrecord.tools.tfrecord2idx import create_index
from tfrecord.writer import TFRecordWriter

SAMPLE_MAGIC = 0x31534246  # "FBS1"


def masked_crc(data):
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def sections(data, index="true", **over):
    """A small verified dataset: 2 files x 6 records of about 3000 bytes (variable sizes)."""
    s = {
        "dataset": {
            "data_dir": str(data),
            "format": "tfrecord",
            "num_files_train": 2,
            "num_samples_per_file": 6,
            "record_length_bytes": 3000,
            "record_length_bytes_stdev": 500,
            "file_access": "per_rank",
            "verify": "true",
            "seed": 7,
        },
        "format.tfrecord": {"index": index},
    }
    for sec, kv in over.items():
        s.setdefault(sec.replace("_", "."), {}).update(kv)
    return s


def frames(path):
    """(offset, framed size, data) of every record, checking both CRCs independently."""
    out = []
    with open(path, "rb") as f:
        blob = f.read()
    off = 0
    while off < len(blob):
        (length,) = struct.unpack_from("<Q", blob, off)
        (lcrc,) = struct.unpack_from("<I", blob, off + 8)
        assert lcrc == masked_crc(blob[off : off + 8]), f"length CRC at {off}"
        data = blob[off + 12 : off + 12 + length]
        (dcrc,) = struct.unpack_from("<I", blob, off + 12 + length)
        assert dcrc == masked_crc(data), f"data CRC at {off}"
        out.append((off, length + 16, data))
        off += length + 16
    assert off == len(blob)
    return out


def check_sample(buf, file_index, sample_index):
    """The sample header feedbench writes (formats/sample.h) and its payload CRC."""
    magic, crc, _seed, _dsid, fidx, length, sidx = struct.unpack_from("<IIQQIIQ", buf, 0)
    assert magic == SAMPLE_MAGIC
    assert fidx == file_index
    assert sidx == sample_index
    assert length == len(buf)
    assert crc == crc32c.crc32c(bytes(buf[40:]))


def generate(feedbench, data, index="true"):
    """Generates sections(data, index); returns its files."""
    r = feedbench(sections(data, index), cmd="generate")
    assert r.rc == 0, r.output
    files = sorted(data.glob("*.tfrecord"))
    assert len(files) == 2
    assert all(os.path.exists(str(p) + ".idx") == (index == "true") for p in files)
    return files


def test_feedbench_files_read_by_tfrecord_package(feedbench, tmp_path):
    files = generate(feedbench, tmp_path / "data")
    first = 0
    for fidx, path in enumerate(files):
        idx = str(path) + ".idx"
        recs = frames(path)
        # The index is DALI's / tfrecord2idx's: "<offset> <framed size>" per record.
        with open(idx) as f:
            lines = [tuple(map(int, line.split())) for line in f]
        assert lines == [(off, size) for off, size, _ in recs]
        loader = tfrecord_loader(
            str(path), idx, {"image": "byte", "label": "int", "size": "int"}, shard=(0, 1)
        )
        n = 0
        for i, ex in enumerate(loader):
            img = bytes(ex["image"])
            assert int(ex["size"][0]) == len(img)
            assert int(ex["label"][0]) == first + i
            check_sample(img, fidx, i)
            n += 1
        assert n == len(recs) == 6
        first += n


def test_shared_files_at_two_ranks(feedbench, tmp_path):
    """Shared files at 2 ranks: one writer per file, every record read once."""
    data = tmp_path / "data"
    r = feedbench(sections(data, dataset={"file_access": "shared"}), ranks=2)
    assert r.rc == 0, r.output
    s = r.summary
    files = sorted(data.glob("*.tfrecord"))
    # Bytes read are the framed records (header, Example, CRC): every file once.
    assert s["metric"]["train_bytes_read"] == sum(os.path.getsize(p) for p in files)
    for path in files:
        assert len(frames(path)) == 6


def write_python_tfrecords(data, with_index, nfiles=2, nrec=5):
    data.mkdir()
    total, sizes = 0, []
    for k in range(nfiles):
        path = data / f"py_{k}.tfrecord"
        w = TFRecordWriter(str(path))
        for i in range(nrec):
            img = bytes((i * 31 + k + j) & 0xFF for j in range(100 + 37 * i))
            w.write({"image": (img, "byte"), "label": (i, "int")})
            sizes.append(len(img))
        w.close()
        if with_index:
            create_index(str(path), str(path) + ".idx")
    return sum(sizes), len(sizes)


@pytest.mark.parametrize("with_index", [True, False])
def test_python_tfrecords_read_by_feedbench(feedbench, tmp_path, with_index):
    data = tmp_path / "data"
    nbytes, nrec = write_python_tfrecords(data, with_index)
    r = feedbench(
        sections(
            data,
            "true" if with_index else "false",
            dataset={"generate": "never", "verify": "false"},
            train={"epochs": 2},
        )
    )
    assert r.rc == 0, r.output
    s = r.summary
    disc = s["format"]["discovered"]
    assert disc["files"] == 2
    assert disc["samples"] == nrec
    assert disc["bytes"] == nbytes
    assert "'image' bytes" in disc["first_files"][0]["detail"]
    # Samples are the image bytes; reads move whole framed records.
    on_disk = sum(os.path.getsize(p) for p in data.glob("*.tfrecord"))
    assert s["metric"]["train_bytes_read"] == 2 * on_disk
    assert sum(e["samples"] for e in s["epochs"]) == 2 * nrec


def test_example_without_image_is_read_whole(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    w = TFRecordWriter(str(data / "x.tfrecord"))
    for i in range(3):
        w.write({"pixels": (b"\x01\x02\x03" * (i + 1), "byte"), "label": (i, "int")})
    w.close()
    whole = sum(len(data) for _off, _size, data in frames(data / "x.tfrecord"))
    r = feedbench(sections(data, dataset={"generate": "never", "verify": "false",
                                          "num_files_train": 1}))
    assert r.rc == 0, r.output
    s = r.summary
    assert s["format"]["discovered"]["bytes"] == whole
    assert s["metric"]["train_bytes_read"] == whole + 3 * 16
    assert "whole Examples" in s["format"]["discovered"]["first_files"][0]["detail"]


def flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x40]))


@pytest.mark.parametrize("index", ["true", "false"])
def test_corruption_names_the_record(feedbench, tmp_path, index):
    """A flipped byte in each part of a record's frame: TensorFlow's message, file, offset."""
    files = generate(feedbench, tmp_path / "data", index)
    off, size, _ = frames(files[1])[3]
    for where in (off + 1, off + 9, off + 200, off + size - 2):  # length, its CRC, data, CRC
        flip(files[1], where)
        r = feedbench(sections(tmp_path / "data", index, dataset={"generate": "never"}))
        flip(files[1], where)
        assert r.rc == 1, r.output
        assert f"tfrecord: corrupted record at {off} in '{files[1]}'" in r.output


@pytest.mark.parametrize("index", ["true", "false"])
def test_truncation_names_the_record(feedbench, tmp_path, index):
    files = generate(feedbench, tmp_path / "data", index)
    recs = frames(files[0])
    off, size, _ = recs[4]
    os.truncate(files[0], off + size // 2)
    r = feedbench(sections(tmp_path / "data", index, dataset={"generate": "never"}))
    assert r.rc == 1, r.output
    assert f"tfrecord: truncated record at {off} in '{files[0]}'" in r.output


def test_dlio_index_folder(feedbench, tmp_path):
    """DLIO keeps data in data_folder/train/ and the index files in data_folder/index/train/:
    feedbench finds them there, reads them (a broken one is an error naming it), and does not
    count them as foreign files."""
    folder = tmp_path / "dlio"
    train = folder / "train"
    folder.mkdir()
    write_python_tfrecords(train, False, nfiles=3)
    (folder / "index" / "train").mkdir(parents=True)
    for path in sorted(train.glob("*.tfrecord")):
        create_index(str(path), str(folder / "index" / "train" / (path.name + ".idx")))
    cfg = sections(train, "true", dataset={"generate": "never", "verify": "false",
                                           "num_files_train": 3})
    r = feedbench(cfg)
    assert r.rc == 0, r.output
    detail = r.discovered["first_files"][0]["detail"]
    assert "with index %s" % (folder / "index" / "train" / "py_0.tfrecord.idx") in detail
    assert not [w for w in r.summary["warnings"] if "ignored" in w], r.summary["warnings"]
    (folder / "index" / "train" / "py_1.tfrecord.idx").write_text("0 5\n")
    r = feedbench(cfg)
    assert r.rc != 0
    assert "tfrecord: index '%s' line 1" % (folder / "index" / "train" / "py_1.tfrecord.idx") \
        in r.output


def test_index_dir_key(feedbench, tmp_path):
    """[format.tfrecord] index_dir: generation writes the index files there, reading uses them."""
    data, idx = tmp_path / "data", tmp_path / "idx"
    cfg = sections(data, "true", format_tfrecord={"index_dir": idx})
    assert feedbench(cfg, cmd="generate").rc == 0
    names = sorted(p.name for p in data.glob("*.tfrecord"))
    assert sorted(p.name for p in idx.iterdir()) == [n + ".idx" for n in names]
    assert not list(data.glob("*.idx"))
    for n in names:
        assert len((idx / (n + ".idx")).read_text().splitlines()) == 6
    assert feedbench(cfg).rc == 0
    (idx / (names[0] + ".idx")).write_text("0 5\n")
    r = feedbench(cfg)
    assert r.rc != 0
    assert "tfrecord: index '%s' line 1" % (idx / (names[0] + ".idx")) in r.output
