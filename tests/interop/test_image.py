"""jpeg, png: PIL opens feedbench's images and decodes the pixels feedbench verifies; images
PIL writes (grey, RGB, RGBA, palette, 16-bit) are read and decoded by feedbench with the right
counts and bytes; damaged images fail naming the file and the offset."""
import math
import os
import struct

import crc32c
import numpy as np
import pytest
from PIL import Image

from conftest import header_fields

JPEG_TAG = b"feedbench\0"


def dims(length):
    """The image of a length-byte sample: DLIO's width floor(sqrt(L)), height ceil(L / w)."""
    w = math.isqrt(length)
    return w, -(-length // w)


def app9_header(path):
    """The 40-byte sample header feedbench keeps in a JPEG's APP9 segment."""
    with Image.open(path) as img:
        segs = [d for m, d in img.applist if m == "APP9" and d.startswith(JPEG_TAG)]
    assert len(segs) == 1
    return segs[0][len(JPEG_TAG):]


def generate(feedbench, tmp_path, fmt, name, seed=7):
    data = tmp_path / name
    r = feedbench({"dataset": {"data_dir": data, "format": fmt, "num_files_train": 3,
                               "num_samples_per_file": 2, "record_length_bytes": 5000,
                               "record_length_bytes_stdev": 1500, "verify": "true",
                               "seed": seed}})
    assert r.rc == 0
    return r, sorted(data.glob("*." + fmt))


def test_feedbench_images_open_in_pil(feedbench, tmp_path):
    rp, pngs = generate(feedbench, tmp_path, "png", "png")
    rj, jpegs = generate(feedbench, tmp_path, "jpeg", "jpeg")
    assert len(pngs) == len(jpegs) == 6
    worst = 0.0
    for png, jpeg in zip(pngs, jpegs):
        with Image.open(png) as img:
            assert img.format == "PNG" and img.mode == "L"
            pix = np.asarray(img).tobytes()
        magic, length, index = header_fields(pix)
        assert magic == b"FBS1" and index == 0
        assert Image.open(png).size == dims(length)
        assert not any(pix[length:])  # the rest of the last row is zero
        sample = pix[:length]
        # PNG is lossless: the pixels are the sample, its CRC32C in its header
        assert struct.unpack("<I", sample[4:8])[0] == crc32c.crc32c(sample[40:])
        with Image.open(jpeg) as img:
            assert img.format == "JPEG" and img.mode == "L" and img.size == dims(length)
            dec = np.asarray(img).tobytes()
        hdr = app9_header(jpeg)
        # the header is the sample's (seed, file, length, index; the dataset id is the jpeg
        # dataset's), but for the CRC: that of the pixels PIL decodes here
        assert hdr[:4] == b"FBS1" and hdr[8:16] == sample[8:16] and hdr[24:] == sample[24:40]
        assert struct.unpack("<I", hdr[4:8])[0] == crc32c.crc32c(dec[40:length])
        # the same seed gives both formats the same payload: JPEG's is within its loss
        a = np.frombuffer(sample[40:], np.uint8).astype(int)
        b = np.frombuffer(dec[40:length], np.uint8).astype(int)
        worst = max(worst, float(np.abs(a - b).mean()))
    assert 0 < worst < 40, worst  # quality 75 on uniform noise: about 25 grey levels
    # each sample read is the whole file, read once
    for r, files in ((rp, pngs), (rj, jpegs)):
        assert r.metric["train_samples"] == 6
        assert r.metric["train_bytes_read"] == sum(os.path.getsize(f) for f in files)
    # PIL writes feedbench's PNGs again with its own encoder (zlib level 1): feedbench
    # decodes the new files to the same samples and verifies them
    before = [p.read_bytes() for p in pngs]
    for p in pngs:
        with Image.open(p) as img:
            img.load()
            img.save(p, compress_level=1)
    assert [p.read_bytes() for p in pngs] != before
    r, _ = generate(feedbench, tmp_path, "png", "png")
    assert r.rc == 0
    assert r.metric["train_bytes_read"] == sum(os.path.getsize(f) for f in pngs)
    assert [p.read_bytes() for p in pngs] != before  # not generated again


PIL_CASES = [
    ("a_grey.png", lambda g, c: Image.fromarray(g), 1, "png 24x20, colour type 0, 8-bit"),
    ("b_rgb.png", lambda g, c: Image.fromarray(c), 3, "png 24x20, colour type 2, 8-bit"),
    ("c_rgba.png", lambda g, c: Image.fromarray(np.dstack([c, g])), 4,
     "png 24x20, colour type 6, 8-bit"),
    ("d_palette.png", lambda g, c: Image.fromarray(c).convert("P"), 3,
     "png 24x20, colour type 3, 8-bit"),
    ("e_grey16.png", lambda g, c: Image.fromarray(g.astype(np.uint16) * 257), 2,
     "png 24x20, colour type 0, 16-bit"),
    ("f_grey.jpg", lambda g, c: Image.fromarray(g), 1, "jpeg 24x20, 1 component, 8-bit"),
    ("g_rgb.jpeg", lambda g, c: Image.fromarray(c), 3, "jpeg 24x20, 3 components, 8-bit"),
    ("h_progressive.jpg", lambda g, c: Image.fromarray(c), 3,
     "jpeg 24x20, 3 components, 8-bit"),
]


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_pil_images_read_by_feedbench(feedbench, tmp_path, fmt):
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(3)
    g = rng.integers(0, 255, (20, 24), dtype=np.uint8)
    c = rng.integers(0, 255, (20, 24, 3), dtype=np.uint8)
    cases = [x for x in PIL_CASES if (x[0].endswith(".png")) == (fmt == "png")]
    for name, make, _, _ in cases:
        make(g, c).save(data / name, progressive="progressive" in name)
    r = feedbench({"dataset": {"data_dir": data, "format": fmt, "generate": "never",
                               "verify": "false"},
                   "train": {"epochs": 2}})
    assert r.rc == 0
    assert r.metric["train_samples"] == 2 * len(cases)
    assert r.metric["train_bytes_read"] == 2 * sum(os.path.getsize(data / n)
                                                   for n, _, _, _ in cases)
    found = {f["file"]: f for f in r.discovered["first_files"]}
    for name, _, channels, detail in cases:
        assert found[name]["samples"] == 1
        assert found[name]["bytes"] == 24 * 20 * channels  # decoded, as np.asarray gives
        assert found[name]["detail"] == detail


def test_damaged_pil_jpeg(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    g = np.random.default_rng(5).integers(0, 255, (64, 64), dtype=np.uint8)
    Image.fromarray(g).save(data / "x.jpg")
    # decode = false reads the same bytes and decodes nothing
    r = feedbench({"dataset": {"data_dir": data, "format": "jpeg", "generate": "never",
                               "verify": "false"}, "format.image": {"decode": "false"}})
    assert r.rc == 0
    assert r.metric["train_bytes_read"] == os.path.getsize(data / "x.jpg")
    assert "train_decoded_samples" not in r.metric
    raw = (data / "x.jpg").read_bytes()
    scan = raw.index(b"\xff\xda")
    (data / "x.jpg").write_bytes(raw[:len(raw) // 2])
    r = feedbench({"dataset": {"data_dir": data, "format": "jpeg", "generate": "never",
                               "verify": "false"}})
    assert r.rc == 1
    assert ("jpeg: corrupt image '%s' in the scan data from offset %d: Premature end of JPEG "
            "file" % (data / "x.jpg", scan)) in r.output
