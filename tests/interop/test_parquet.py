"""Parquet interop with pyarrow, both ways.

- pyarrow reads feedbench's files (each compression): the schema DLIO's parquet generator
  writes (LIST columns of float32 / uint8 / int16 / float16, an int64 scalar, a binary column),
  row groups of row_group_size rows, and every row's columns put back together is the sample
  feedbench wrote (header fields and payload CRC32C checked independently).
- feedbench reads pyarrow's files: feedbench's own files rewritten by pq.write_table with its
  defaults and with each compression, dictionary on and off, data page v2 and small pages, read
  back with verify = true (every byte of every row and column checked); and a table of
  pyarrow's own with nulls, strings, variable lists and scalars, whose sample sizes (the bytes
  of the values of each row) feedbench must count exactly.
- what feedbench refuses: an encoding it does not read (DELTA_BINARY_PACKED), a BOOLEAN column,
  a cut file, a flipped byte of a page header, named with file, column and offset.
"""

import struct

import crc32c
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

SAMPLE_MAGIC = 0x31534246  # "FBS1"
COLUMNS = "emb:float32:64, mask:uint8:100, code:int16:10, half:float16:8, n:int64, blob:binary"


def sections(data, **over):
    s = {
        "dataset": {
            "data_dir": str(data),
            "format": "parquet",
            "num_files_train": 2,
            "num_samples_per_file": 12,
            "record_length_bytes": 3000,
            "record_length_bytes_stdev": 500,
            "file_access": "per_rank",
            "verify": "true",
            "seed": 7,
        },
        "format.parquet": {"columns": COLUMNS, "row_group_size": 5},
    }
    for sec, kv in over.items():
        s.setdefault(sec.replace("_", "."), {}).update(kv)
    return s


def row_bytes(table, i):
    """The bytes of row i as feedbench puts a sample together: each column's values with their
    own width, in schema order; a binary value as it is; a null adds nothing."""
    out = b""
    for col in table.columns:
        v = col[i]
        if not v.is_valid:
            continue
        if pa.types.is_list(col.type) or pa.types.is_fixed_size_list(col.type):
            arr = v.values
            out += arr.to_numpy(zero_copy_only=False).astype(arr.type.to_pandas_dtype()).tobytes()
        elif pa.types.is_binary(col.type):
            out += v.as_py()
        elif pa.types.is_string(col.type):
            out += v.as_py().encode()
        else:
            out += np.asarray([v.as_py()], dtype=col.type.to_pandas_dtype()).tobytes()
    return out


def check_sample(buf, file_index, sample_index):
    magic, crc, _seed, _dsid, fidx, length, sidx = struct.unpack_from("<IIQQIIQ", buf, 0)
    assert magic == SAMPLE_MAGIC
    assert (fidx, sidx, length) == (file_index, sample_index, len(buf))
    assert crc == crc32c.crc32c(bytes(buf[40:]))


def generate(feedbench, data, **over):
    r = feedbench(sections(data, **over), cmd="generate")
    assert r.rc == 0, r.output
    files = sorted(data.glob("*.parquet"))
    assert len(files) == 2
    return files


@pytest.mark.parametrize("compression", ["none", "snappy", "zstd", "gzip"])
def test_pyarrow_reads_feedbench(feedbench, tmp_path, compression):
    files = generate(feedbench, tmp_path / "data", format_parquet={"compression": compression})
    for k, path in enumerate(files):
        pf = pq.ParquetFile(path)
        assert pf.metadata.num_rows == 12
        assert pf.metadata.num_row_groups == 3  # 5 + 5 + 2 rows
        col = pf.metadata.row_group(0).column(0)
        assert col.compression == ("UNCOMPRESSED" if compression == "none" else compression.upper())
        t = pf.read()
        assert t.schema.names == ["emb", "mask", "code", "half", "n", "blob"]
        assert t.schema.field("emb").type == pa.list_(pa.float32())
        assert t.schema.field("mask").type == pa.list_(pa.uint8())
        assert t.schema.field("code").type == pa.list_(pa.int16())
        assert t.schema.field("half").type == pa.list_(pa.float16())
        assert t.schema.field("n").type == pa.int64()
        assert t.schema.field("blob").type == pa.binary()
        for i in range(t.num_rows):
            assert len(t.column("emb")[i].values) == 64
            check_sample(row_bytes(t, i), k, i)


VARIANTS = [
    {},  # pyarrow's defaults: snappy, dictionary, data page v1
    {"compression": "snappy"},
    {"compression": "zstd"},
    {"compression": "gzip"},
    {"compression": "none", "use_dictionary": False},
    {"use_dictionary": True, "data_page_size": 512},  # many pages, dictionary fallback
    {"data_page_version": "2.0"},
    {"data_page_version": "2.0", "use_dictionary": False, "compression": "zstd"},
    {"row_group_size": 4},
]


def test_pyarrow_rewrite_verifies(feedbench, tmp_path):
    """Each file rewritten by pq.write_table with one variant of its options, then read back by
    feedbench with verify = true at 2 ranks."""
    data = tmp_path / "data"
    n = len(VARIANTS)
    over = {"dataset": {"num_files_train": n}}
    r = feedbench(sections(data, **over), cmd="generate")
    assert r.rc == 0, r.output
    files = sorted(data.glob("*.parquet"))
    assert len(files) == n
    for path, opts in zip(files, VARIANTS):
        t = pq.read_table(path)
        pq.write_table(t, path, **opts)
    r = feedbench(sections(data, dataset={"generate": "never", "num_files_train": n}), ranks=2)
    assert r.rc == 0, r.output
    assert r.metric["train_samples"] == 12 * n


def test_pyarrow_table_sizes(feedbench, tmp_path):
    """A table of pyarrow's own (nulls, strings, variable lists, scalars, dictionary-encoded
    repeats): feedbench's sample count and bytes equal the values' bytes row by row."""
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(3)
    n = 50
    t = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "score": pa.array([None if i % 7 == 0 else float(i) / 3 for i in range(n)],
                          type=pa.float64()),
        "name": pa.array(["s_%d" % (i % 5) if i % 11 else None for i in range(n)]),
        "vec": pa.array([rng.standard_normal(i % 9).astype(np.float32).tolist()
                         if i % 13 else None for i in range(n)], type=pa.list_(pa.float32())),
        "small": pa.array((np.arange(n) % 3).astype(np.int8)),
    })
    pq.write_table(t, data / "a.parquet", row_group_size=16)
    pq.write_table(t, data / "b.parquet", data_page_version="2.0", compression="zstd")
    expect = [row_bytes(t, i) for i in range(n)]
    r = feedbench(sections(data, dataset={"generate": "never", "verify": "false",
                                          "num_files_train": 2}, format_parquet={"columns": ""}))
    assert r.rc == 0, r.output
    disc = r.summary["format"]["discovered"]
    assert disc["samples"] == 2 * n
    assert disc["bytes"] == 2 * sum(len(b) for b in expect)
    assert r.summary["format"]["largest_sample_bytes"] == max(len(b) for b in expect)
    assert r.metric["train_samples"] == 2 * n
    assert "columns id, score, name, vec, small" in disc["first_files"][0]["detail"]


def test_read_columns_reads_fewer_bytes(feedbench, tmp_path):
    data = tmp_path / "data"
    files = generate(feedbench, data)
    part = feedbench(sections(data, dataset={"generate": "never", "verify": "false"},
                              format_parquet={"read_columns": "mask, n"}))
    assert part.rc == 0, part.output
    # mask (100 x int32 values) and n (8 bytes) only: well under a fifth of the files (each
    # row group read once: no shuffle, one reader thread)
    assert 0 < part.metric["train_bytes_read"] * 5 < sum(f.stat().st_size for f in files)
    refused = feedbench(sections(data, dataset={"generate": "never"},
                                 format_parquet={"read_columns": "mask"}))
    assert refused.rc == 2
    assert "read_columns leaves columns" in refused.output
    missing = feedbench(sections(data, dataset={"generate": "never", "verify": "false"},
                                 format_parquet={"read_columns": "nope"}))
    assert missing.rc == 1
    assert "has no column 'nope'" in missing.output


def foreign(feedbench, data):
    return feedbench(sections(data, dataset={"generate": "never", "verify": "false",
                                             "num_files_train": 1},
                              format_parquet={"columns": ""}))


def test_refusals_name_file_column_offset(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    path = data / "x.parquet"
    t = pa.table({"a": pa.array(np.arange(100, dtype=np.int64))})
    pq.write_table(t, path, use_dictionary=False, column_encoding={"a": "DELTA_BINARY_PACKED"})
    r = foreign(feedbench, data)
    assert r.rc == 1
    start = pq.ParquetFile(path).metadata.row_group(0).column(0).data_page_offset
    assert (f"bad parquet file '{path}': encoding DELTA_BINARY_PACKED not handled" in r.output)
    assert f"(column 'a', row group 0) at offset {start}" in r.output

    pq.write_table(pa.table({"flag": pa.array([True, False])}), path)
    r = foreign(feedbench, data)
    assert r.rc == 1
    assert "column 'flag' has type BOOLEAN, not handled" in r.output


def test_corruption_is_named(feedbench, tmp_path):
    data = tmp_path / "data"
    snappy = {"compression": "snappy"}
    files = generate(feedbench, data, format_parquet=snappy)
    victim = files[1]
    blob = victim.read_bytes()
    victim.write_bytes(blob[:-100])  # cut: the footer and its magic are gone
    r = feedbench(sections(data, dataset={"generate": "never"}, format_parquet=snappy))
    assert r.rc == 1
    assert (f"bad parquet file '{victim}': no PAR1 magic at the end (truncated file?) at "
            f"offset {len(blob) - 104}") in r.output
    victim.write_bytes(blob)
    md = pq.ParquetFile(victim).metadata.row_group(1).column(2)
    start = md.data_page_offset
    bad = bytearray(blob)
    bad[start] = 0x00  # the page header's first field: a STOP, no type nor sizes
    victim.write_bytes(bytes(bad))
    r = feedbench(sections(data, dataset={"generate": "never"}, format_parquet=snappy))
    assert r.rc == 1
    assert (f"bad parquet file '{victim}': bad page header (page header lacks its type or "
            f"sizes) (column 'code', row group 1) at offset {start}") in r.output
    victim.write_bytes(blob)
    bad = bytearray(blob)
    bad[md.data_page_offset + md.total_compressed_size - 3] ^= 0x55  # inside snappy data
    victim.write_bytes(bytes(bad))
    r = feedbench(sections(data, dataset={"generate": "never"}, format_parquet=snappy))
    assert r.rc == 1
    assert f"'{victim}'" in r.output
    assert ("corrupt snappy page" in r.output or "verification failed" in r.output)
