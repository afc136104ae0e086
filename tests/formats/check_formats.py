#!/usr/bin/env python3
"""Format tests driven through real mpiexec runs (standard library only).

  check_formats.py matrix FMT ACCESS RANKS [section.key=value ...]
      run configs/formats/FMT.ini with verify = true; exit 0, every sample read each epoch
  check_formats.py refuse FMT ACCESS REGEX [section.key=value ...]
      the run is refused before touching a file: exit 2 and the message matches REGEX
  check_formats.py corrupt FMT
      generate at 2 ranks; a flipped payload byte and format-level corruption each end the
      run with exit 1 and a message naming the file and the offset (jpeg, png: a byte of the
      compressed pixels, of the sample header, a cut file)

Environment (set by ctest): FEEDBENCH, MPIEXEC, FEEDBENCH_SOURCE_DIR, FEEDBENCH_BUILD_DIR.
"""
import configparser
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile

FB = os.environ["FEEDBENCH"]
MPIEXEC = os.environ.get("MPIEXEC") or "mpiexec"
SRC = os.environ["FEEDBENCH_SOURCE_DIR"]
BUILD = os.environ["FEEDBENCH_BUILD_DIR"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def workdir(name):
    d = os.path.join(BUILD, "tmp", "formats", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def feedbench(cmd, fmt, ranks, sets, out=None):
    args = [MPIEXEC, "--oversubscribe", "-n", str(ranks), FB, cmd,
            os.path.join(SRC, "configs", "formats", fmt + ".ini")]
    for s in sets:
        args += ["--set", s]
    if out:
        args += ["--output", out, "--quiet"]
    print("+ " + " ".join(args), flush=True)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=240)
    print(p.stdout[-4000:])
    return p.returncode, p.stdout


def summary(out):
    found = glob.glob(os.path.join(out, "*", "summary.json"))
    if len(found) != 1:
        fail("expected one summary.json under %s, found %d" % (out, len(found)))
    with open(found[0]) as f:
        return json.load(f)


def expected_samples(fmt, extra):
    """num_files_train x num_samples_per_file of configs/formats/FMT.ini with the --set values."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    ini.read(os.path.join(SRC, "configs", "formats", fmt + ".ini"))
    ds = dict(ini["dataset"])
    for e in extra:
        key, _, value = e.partition("=")
        if key.startswith("dataset."):
            ds[key[len("dataset."):]] = value
    return int(ds["num_files_train"]) * int(ds["num_samples_per_file"])


def matrix(fmt, access, ranks, extra):
    d = workdir("matrix-%s-%s-%s" % (fmt, access, "-".join(e.replace("=", "_") for e in extra)))
    out = os.path.join(d, "out")
    sets = ["dataset.data_dir=" + os.path.join(d, "data"), "dataset.file_access=" + access,
            "dataset.verify=true"] + extra
    rc, text = feedbench("run", fmt, ranks, sets, out)
    if rc != 0:
        fail("exit %d, expected 0" % rc)
    s = summary(out)
    # The expected count comes from the config the test gave (files x samples per file), not
    # from the product's own summary: a reader that loses files would agree with itself.
    nsamples = expected_samples(fmt, extra)
    if s["format"]["samples"] != nsamples:
        fail("summary.json format.samples is %d, the config makes %d" % (s["format"]["samples"],
                                                                        nsamples))
    epochs = len(s["epochs"])
    if epochs != s["config"]["train"]["epochs"]:
        fail("%d epochs in summary, config says %d" % (epochs, s["config"]["train"]["epochs"]))
    for e in s["epochs"]:
        if e["samples"] != nsamples:
            fail("epoch %d read %d samples, the dataset has %d" % (e["epoch"], e["samples"],
                                                                    nsamples))
        if e["bytes_read"] <= 0:
            fail("epoch %d read no bytes" % e["epoch"])
    if fmt in ("jpeg", "png"):  # every sample decoded on the reader threads, timed apart
        m = s["metric"]
        if m.get("train_decoded_samples") != epochs * nsamples:
            fail("decoded %r samples, read %d" % (m.get("train_decoded_samples"),
                                                  epochs * nsamples))
        if not 0 < m["train_decode_seconds"] or not 0 < m["train_decode_share_of_reading"] <= 1:
            fail("decode time %r, share %r" % (m["train_decode_seconds"],
                                               m["train_decode_share_of_reading"]))
        for e in s["epochs"]:
            if e["decoded_samples"] != nsamples:
                fail("epoch %d decoded %d samples" % (e["epoch"], e["decoded_samples"]))
    print("ok: %d epochs x %d samples verified" % (epochs, nsamples))


def refuse(fmt, access, regex, extra):
    d = workdir("refuse-%s-%s" % (fmt, access))
    data = os.path.join(d, "data")
    rc, text = feedbench("run", fmt, 2, ["dataset.data_dir=" + data,
                                         "dataset.file_access=" + access] + extra,
                         os.path.join(d, "out"))
    if rc != 2:
        fail("exit %d, expected 2" % rc)
    if not re.search(regex, text):
        fail("message does not match %r" % regex)
    if os.path.exists(data):
        fail("the data folder was created before the config was refused")


# ---- where a sample's payload lies, from the files themselves ------------------------------

def npy_data_offset(path):
    with open(path, "rb") as f:
        head = f.read(12)
    if head[6] == 1:
        return 10 + struct.unpack("<H", head[8:10])[0]
    return 12 + struct.unpack("<I", head[8:12])[0]


def npz_x_data(path):
    """File offset of x.npy's data and the bytes per sample (dim1 * dim2)."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("x.npy")
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)
        member = info.header_offset + 30 + struct.unpack("<H", local[26:28])[0] + \
            struct.unpack("<H", local[28:30])[0]
        f.seek(member)
        head = f.read(4096)
    hlen = 10 + struct.unpack("<H", head[8:10])[0]
    shape = re.search(rb"'shape': \((\d+), (\d+), (\d+)\)", head[:hlen])
    return member + hlen, int(shape.group(1)) * int(shape.group(2))


def jpeg_segments(path):
    """{marker: offset} of the segments before the first scan (0xDA: the scan)."""
    with open(path, "rb") as f:
        d = f.read()
    pos, seen = 2, {}
    while pos + 4 <= len(d):
        m = d[pos + 1]
        seen.setdefault(m, pos)
        if m == 0xDA:
            break
        pos += 2 + struct.unpack(">H", d[pos + 2:pos + 4])[0]
    return seen


def flip(path, off):
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0xFF]))


def expect_failure(fmt, sets, regex, what):
    rc, text = feedbench("run", fmt, 2, sets + ["dataset.generate=never"])
    if rc != 1:
        fail("%s: exit %d, expected 1" % (what, rc))
    if not re.search(regex, text):
        fail("%s: message does not match %r" % (what, regex))
    print("ok: %s -> exit 1, %r" % (what, regex))


def corrupt_parquet(data, sets):
    """parquet, uncompressed, float32 first column (its values are the sample's bytes as they
    are): a payload byte of row 1, a page header, a cut footer."""
    sets = sets + ["format.parquet.compression=none"]
    rc, _ = feedbench("generate", "parquet", 2, sets)
    if rc != 0:
        fail("generation: exit %d" % rc)
    victim = sorted(glob.glob(os.path.join(data, "parquet-*")))[1]
    name = re.escape(victim)
    with open(victim, "rb") as f:
        blob = f.read()
    heads = [m.start() for m in re.finditer(re.escape(struct.pack("<I", 0x31534246)), blob)]
    if len(heads) < 2:
        fail("no sample headers found in %s" % victim)
    flip(victim, heads[1] + 100)  # row 1 of the first row group
    expect_failure("parquet", sets, r"verification failed[^\n]*'%s' sample 1, byte 100 of the "
                   r"sample" % name, "payload byte")
    flip(victim, heads[1] + 100)
    with open(victim, "r+b") as f:  # the first page header's first byte: a Thrift STOP
        f.seek(4)
        f.write(b"\0")
    expect_failure("parquet", sets,
                   r"bad parquet file '%s': bad page header \(page header lacks its type or "
                   r"sizes\) \(column 'emb', row group 0\) at offset 4" % name, "page header")
    with open(victim, "r+b") as f:
        f.seek(4)
        f.write(blob[4:5])
        f.truncate(len(blob) - 100)
    expect_failure("parquet", sets,
                   r"bad parquet file '%s': no PAR1 magic at the end \(truncated file\?\) at "
                   r"offset %d" % (name, len(blob) - 104), "cut footer")


def corrupt_image(fmt, sets, victim, name):
    """jpeg, png: damage in the compressed pixels, a cut file, and (jpeg) a damaged sample
    header each name the file and the offset."""
    size = os.path.getsize(victim)
    if fmt == "jpeg":
        scan = jpeg_segments(victim)[0xDA]
        off = scan + 1000
        flip(victim, off)
        expect_failure(fmt, sets, r"'%s' at offset %d" % (name, off), "scan data byte")
        flip(victim, off)
        seed = jpeg_segments(victim)[0xE9] + 4 + 10 + 8  # the seed in the sample header
        flip(victim, seed)
        expect_failure(fmt, sets, r"verification failed: '%s' at offset %d" % (name, seed),
                       "sample header byte")
        flip(victim, seed)
        cut = r"'%s' at offset %d .*Premature end of JPEG file" % (name, size - 100)
    else:
        off = 33 + 8 + 1000  # in the first IDAT chunk, after the 33-byte signature + IHDR
        flip(victim, off)
        expect_failure(fmt, sets, r"png: corrupt image '%s': chunk 'IDAT' at offset 33 fails "
                       r"its CRC" % name, "IDAT byte")
        flip(victim, off)
        cut = r"png: corrupt image '%s': truncated PNG: chunk 'IDAT' of \d+ bytes at offset " \
            r"\d+ runs past the end of the %d-byte file" % (name, size - 100)
    with open(victim, "r+b") as f:
        f.truncate(size - 100)
    expect_failure(fmt, sets, cut, "truncated image")


def corrupt_zarr(data, sets):
    """zarr v3, uncompressed chunks of 4 samples: a payload byte of sample 5 (chunk 1, row 1),
    a cut chunk file (a flipped byte under crc32c: tests/interop/test_zarr.py)."""
    plain = sets + ["format.zarr.codec=none", "format.zarr.shard_chunks=0",
                    "format.zarr.crc32c=false"]
    rc, _ = feedbench("generate", "zarr", 2, plain)
    if rc != 0:
        fail("generation: exit %d" % rc)
    array = sorted(glob.glob(os.path.join(data, "zarr-*")))[1]
    chunk = os.path.join(array, "c", "1", "0")
    size = os.path.getsize(chunk)
    row = size // 4
    flip(chunk, row + 100)
    expect_failure("zarr", plain, r"verification failed[^\n]*'%s' sample 5, byte 100 of the "
                   r"sample" % re.escape(array), "payload byte")
    flip(chunk, row + 100)
    with open(chunk, "r+b") as f:
        f.truncate(size - 10)
    expect_failure("zarr", plain, r"bad zarr chunk '%s': uncompressed chunk of another size "
                   r"than the chunk shape at offset 0" % re.escape(chunk), "cut chunk")


def corrupt_mds(sets, victim, name):
    """mds: a payload byte of sample 1, then an offset of the shard header lying."""
    with open(victim, "rb") as f:
        head = f.read(64)
    off1 = struct.unpack("<I", head[8:12])[0]  # sample 1's row: u32 size, then the data column
    flip(victim, off1 + 4 + 100)
    expect_failure("mds", sets, r"verification failed[^\n]*'%s' sample 1, byte 100 of the "
                   r"sample" % name, "payload byte")
    flip(victim, off1 + 4 + 100)
    with open(victim, "r+b") as f:
        f.seek(12)  # sample 2's offset
        f.write(struct.pack("<I", 0xFFFFFFF0))
    expect_failure("mds", sets, r"bad mds shard '%s': offset 4294967280 of sample 2 \(at "
                   r"offset 12\) is outside" % name, "offset lies")


def corrupt(fmt):
    d = workdir("corrupt-" + fmt)
    data = os.path.join(d, "data")
    sets = ["dataset.data_dir=" + data, "train.epochs=1", "dataset.verify=true",
            "output.dir=" + os.path.join(d, "out")]
    if fmt == "parquet":
        return corrupt_parquet(data, sets)
    if fmt == "zarr":
        return corrupt_zarr(data, sets)
    rc, _ = feedbench("generate", fmt, 2, sets)
    if rc != 0:
        fail("generation: exit %d" % rc)
    files = sorted(f for f in glob.glob(os.path.join(data, fmt + "-*")))
    victim = files[1]
    name = re.escape(victim)

    if fmt in ("jpeg", "png"):
        return corrupt_image(fmt, sets, victim, name)
    if fmt == "mds":
        return corrupt_mds(sets, victim, name)
    # 1. a payload byte: verification names the file and where the byte is
    if fmt == "npy":
        off = npy_data_offset(victim) + 100
        where = r"'%s' at offset %d \(sample 0\)" % (name, off)
    elif fmt == "npz":
        x, L = npz_x_data(victim)
        off = x + 1 * L + 100
        where = r"'%s' at offset %d \(sample 1\)" % (name, off)
    else:
        with tarfile.open(victim) as t:
            m = [m for m in t.getmembers() if m.name.endswith(".bin")][1]
        off = m.offset_data + 100
        where = r"'%s' sample 1, byte 100 of the sample" % name
    flip(victim, off)
    expect_failure(fmt, sets, r"verification failed[^\n]*" + where, "payload byte")
    flip(victim, off)

    # 2. format-level corruption: the format's own message, file and offset
    if fmt == "npy":
        with open(victim, "r+b") as f:
            head = f.read(128).decode("latin-1")
            n = int(re.search(r"'shape': \((\d+),\)", head).group(1))
            # same header length: the padding absorbs a longer number
            lie = head.replace("(%d,)" % n, "(%d,)" % (n + 100), 1)
            lie = lie.rstrip("\n").rstrip(" ").ljust(127) + "\n"
            f.seek(0)
            f.write(lie.encode("latin-1"))
        expect_failure(fmt, sets,
                       r"bad NPY header in '%s': shape \(%d,\) × 1 bytes does not match %d "
                       r"data bytes at offset 128" % (name, n + 100, n), "NPY header lies")
    elif fmt == "npz":
        size = os.path.getsize(victim)
        with open(victim, "r+b") as f:
            f.truncate(size - 100)
        expect_failure(fmt, sets,
                       r"bad zip in '%s': no end of central directory record \(truncated "
                       r"file\?\) at offset %d" % (name, size - 100), "truncated zip")
    else:
        with tarfile.open(victim) as t:
            second = t.getmembers()[1]
        flip(victim, second.offset + 3)  # a byte of the member name
        expect_failure(fmt, sets,
                       r"bad tar header checksum in '%s' at offset %d" % (name, second.offset),
                       "tar checksum")
        flip(victim, second.offset + 3)
        with tarfile.open(victim) as t:
            third = t.getmembers()[4]
        with open(victim, "r+b") as f:
            f.truncate(third.offset_data + 10)
        expect_failure(fmt, sets,
                       r"truncated tar member '%s' in '%s': \d+ bytes at offset %d" %
                       (re.escape(third.name), name, third.offset_data), "truncated shard")


def main(argv):
    if len(argv) >= 4 and argv[1] == "matrix":
        matrix(argv[2], argv[3], int(argv[4]), argv[5:])
    elif len(argv) >= 5 and argv[1] == "refuse":
        refuse(argv[2], argv[3], argv[4], argv[5:])
    elif len(argv) == 3 and argv[1] == "corrupt":
        corrupt(argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
