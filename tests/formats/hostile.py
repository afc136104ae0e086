#!/usr/bin/env python3
"""Hostile inputs: files crafted to break a reader's arithmetic must end the run with exit 1
and the format's own message, never a crash, a hang or a success.

  hostile.py pax        a WebDataset shard whose PAX record starts with a space
  hostile.py tfidx      a TFRecord index whose offsets overflow 64 bits
"""
import io
import os
import subprocess
import sys
import tarfile
import tempfile

FEEDBENCH = os.environ["FEEDBENCH"]
SRC = os.environ["FEEDBENCH_SOURCE_DIR"]


def run(cmd, timeout=60):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def feedbench(config, data, out, *sets):
    cmd = [FEEDBENCH, "run", config, "--quiet", "--output", out,
           "--set", "dataset.data_dir=" + data, "--set", "dataset.generate=never"]
    for s in sets:
        cmd += ["--set", s]
    return run(cmd)


def expect(rc, out, want):
    if rc != 1 or want not in out:
        sys.exit(f"FAIL: exit {rc}, want 1 and {want!r} in:\n{out}")


def pax(tmp):
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        payload = b"x" * 100
        ti = tarfile.TarInfo("k" * 120 + ".bin")  # a long name needs a PAX header
        ti.size = len(payload)
        t.addfile(ti, io.BytesIO(payload))
    raw = bytearray(buf.getvalue())
    size = int(raw[124:136].rstrip(b"\0 ").decode(), 8)
    raw[512:512 + size] = (b" \n2 " + b"\x01" * size)[:size]
    with open(os.path.join(data, "s.tar"), "wb") as f:
        f.write(raw)
    rc, out = feedbench(os.path.join(SRC, "configs/formats/wds.ini"), data,
                        os.path.join(tmp, "out"), "dataset.verify=false",
                        "reader.batch_size=1", "dataset.num_files_train=1")
    expect(rc, out, "bad PAX header in")


def tfidx(tmp):
    data = os.path.join(tmp, "data")
    cfg = os.path.join(SRC, "configs/formats/tfrecord.ini")
    rc, out = run([FEEDBENCH, "generate", cfg, "--quiet", "--set", "dataset.data_dir=" + data])
    if rc != 0:
        sys.exit(f"FAIL: generate: {out}")
    idx = sorted(f for f in os.listdir(data) if f.endswith(".idx"))[0]
    path = os.path.join(data, idx)
    lines = open(path).read().splitlines()
    lines[0:2] = ["0 18446744073709551611", "18446744073709551611 34385"]
    open(path, "w").write("\n".join(lines) + "\n")
    rc, out = feedbench(cfg, data, os.path.join(tmp, "out"), "dataset.verify=false")
    expect(rc, out, "is not \"<offset> <size>\" of the next record")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        {"pax": pax, "tfidx": tfidx}[sys.argv[1]](tmp)
    print("ok")
