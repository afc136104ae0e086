"""npz: feedbench's files open in numpy (DLIO's layout: x uint8 (dim1, dim2, samples) in
Fortran order, y int64 labels, members stored); files numpy.savez writes, x in C or Fortran
order, are read by feedbench with the right samples and bytes."""
import os
import shutil
import zipfile

import numpy as np
import pytest

from conftest import header_fields

GEN = {"format": "npz", "num_files_train": 2, "num_samples_per_file": 5,
       "record_length_bytes": 3000, "record_length_bytes_stdev": 700, "verify": "true"}


def test_feedbench_npz_opens_in_numpy(feedbench, tmp_path):
    data = tmp_path / "data"
    r = feedbench({"dataset": dict(GEN, data_dir=data)}, ranks=2)
    assert r.rc == 0
    files = sorted(data.glob("*.npz"))
    assert len(files) == 2
    true_bytes = 0
    for f, path in enumerate(files):
        with zipfile.ZipFile(path) as z:
            assert sorted(z.namelist()) == ["x.npy", "y.npy"]
            assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        with np.load(path) as npz:
            x, y = npz["x"], npz["y"]
        assert x.dtype == np.uint8 and x.ndim == 3 and x.shape[2] == 5
        assert x.flags.f_contiguous
        assert y.dtype == np.int64 and y.shape == (5,)
        assert list(y) == [f * 5 + i for i in range(5)]
        record = x.shape[0] * x.shape[1]
        lengths = []
        for i in range(5):
            sample = x[:, :, i].tobytes(order="F")
            magic, length, index = header_fields(sample)
            assert magic == b"FBS1" and index == i
            assert length <= record
            assert not any(sample[length:])  # padded with zeros to the largest
            lengths.append(length)
        assert max(lengths) == record
        true_bytes += sum(lengths)
    # read = sample reads each sample's own bytes, nothing else
    assert r.metric["train_samples"] == 10
    assert r.metric["train_bytes_read"] == true_bytes


@pytest.mark.parametrize("order", ["F", "C"])
def test_numpy_rewritten_npz_verifies(feedbench, tmp_path, order):
    """feedbench's npz files rewritten by numpy.savez (zip64 extra fields, x in Fortran or C
    order) read back with verify = true: every byte of every sample is right, the strided
    C-order samples included."""
    data = tmp_path / "data"
    sections = {"dataset": dict(GEN, data_dir=data)}
    assert feedbench(sections, cmd="generate").rc == 0
    for path in sorted(data.glob("*.npz")):
        with np.load(path) as npz:
            x, y = npz["x"], npz["y"]
        x = np.asfortranarray(x) if order == "F" else np.ascontiguousarray(x)
        os.unlink(path)
        np.savez(path, x=x, y=y)
        assert path.exists()
    r = feedbench(dict(sections, dataset=dict(GEN, data_dir=data, generate="never")),
                  ranks=2)
    assert r.rc == 0
    assert r.metric["train_samples"] == 10


def savez(path, x, y):
    np.savez(path, x=x, y=y)
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("x.npy")
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        n, m = np.frombuffer(f.read(4), "<u2")
        f.seek(info.header_offset + 30 + n + m)
        np.lib.format.read_magic(f)
        hlen = int.from_bytes(f.read(2), "little")
    return info.header_offset + 30 + n + m + 10 + hlen


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("read", ["sample", "whole"])
def test_numpy_npz_read_by_feedbench(feedbench, tmp_path, order, read):
    data = tmp_path / "data"
    data.mkdir()
    shapes = [(6, 5, 7), (4, 3, 9)]
    expected = 0
    for k, shape in enumerate(shapes):
        x = np.arange(np.prod(shape), dtype="<f4").reshape(shape)
        x = np.asfortranarray(x) if order == "F" else np.ascontiguousarray(x)
        path = data / ("d%d.npz" % k)
        savez(path, x, np.arange(shape[2], dtype=np.int64))
        n, sample = shape[2], shape[0] * shape[1] * 4
        if read == "whole":  # every sample access reads the whole file, as numpy.load
            expected += n * os.path.getsize(path)
        elif order == "F":  # one contiguous range per sample
            expected += n * sample
        else:  # strided: the rows from the sample's first element to its last
            expected += n * ((shape[0] * shape[1] - 1) * n * 4 + 4)
    r = feedbench({"dataset": {"data_dir": data, "format": "npz", "generate": "never",
                               "verify": "false"},
                   "format.npz": {"read": read},
                   "train": {"epochs": 2}})
    assert r.rc == 0
    assert r.metric["train_samples"] == 2 * sum(s[2] for s in shapes)
    assert r.metric["train_bytes_read"] == 2 * expected
    assert r.discovered["bytes"] == sum(s[0] * s[1] * s[2] * 4 for s in shapes)
    detail = r.discovered["first_files"][0]["detail"]
    assert detail.startswith("npz x.npy v1.0 <f4 (6, 5, 7) %s order" %
                             ("fortran" if order == "F" else "C"))


def test_compressed_npz_refused(feedbench, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    np.savez_compressed(data / "c.npz", x=np.zeros((4, 4, 3), np.uint8))
    r = feedbench({"dataset": {"data_dir": data, "format": "npz", "generate": "never",
                               "verify": "false"}})
    assert r.rc == 1
    assert "npz member 'x.npy' in '%s' is compressed (method 8)" % (data / "c.npz") in r.output


def test_truncated_npz_member(feedbench, tmp_path):
    """The central directory survives but x.npy's data is cut short."""
    data = tmp_path / "data"
    data.mkdir()
    path = data / "t.npz"
    x_data = savez(path, np.zeros((8, 8, 4), np.uint8), np.arange(4, dtype=np.int64))
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        x = z.getinfo("x.npy")
        y = z.getinfo("y.npy")
    # drop 100 bytes of x's data and y entirely, keep the directory: offsets now lie
    cut = raw[:x_data + 100] + raw[y.header_offset + 100:]
    path.write_bytes(cut)
    r = feedbench({"dataset": {"data_dir": data, "format": "npz", "generate": "never",
                               "verify": "false"}})
    assert r.rc == 1
    assert ("in '%s'" % path) in r.output
    assert "truncated npz member" in r.output or "bad zip" in r.output or \
        "bad npz member" in r.output


def test_dlio_npz_read_at_full_speed(feedbench, tmp_path):
    """DLIO's npz files (np.savez, x uint8 (dim1, dim2, 1) in C order, one sample per file) are
    read like feedbench's own: one read call of the sample's bytes per sample, and a sample
    rate of the same order (the elements are no longer moved one by one: that cost 50x)."""
    side, files, epochs = 1024, 16, 3
    dlio = tmp_path / "dlio"
    dlio.mkdir()
    rng = np.random.default_rng(10)
    for i in range(files):
        x = rng.integers(0, 255, size=(side, side, 1), dtype=np.uint8)
        np.savez(dlio / ("img_%02d_of_%02d.npz" % (i + 1, files)), x=x, y=[0])
    train = {"epochs": epochs, "computation_time": 0, "exclude_start_steps": 0}
    r = feedbench({"dataset": {"data_dir": dlio, "format": "npz", "generate": "never",
                               "verify": "false"}, "train": train})
    assert r.rc == 0, r.output
    assert r.metric["train_samples"] == files * epochs
    assert r.metric["train_read_ops"] == files * epochs
    assert r.metric["train_bytes_read"] == files * epochs * side * side
    own = feedbench({"dataset": {"data_dir": tmp_path / "own", "format": "npz",
                                 "num_files_train": files, "num_samples_per_file": 1,
                                 "record_length_bytes": side * side, "verify": "false"},
                     "train": train})
    assert own.rc == 0, own.output
    rate = r.metric["train_throughput_mean_samples_per_second"]
    own_rate = own.metric["train_throughput_mean_samples_per_second"]
    print("RATES", rate, own_rate)
    assert rate > 0.3 * own_rate, (rate, own_rate)


def test_num_files_train_subset(feedbench, tmp_path):
    """generate = never: a num_files_train below the files found reads the first ones by name
    (as DLIO does), one above is an error naming both counts, none set reads them all."""
    data = tmp_path / "data"
    data.mkdir()
    for i in range(5):
        np.savez(data / ("img_%d_of_5.npz" % (i + 1)), x=np.full((8, 8, 1), i, np.uint8), y=[0])
    base = {"data_dir": data, "format": "npz", "generate": "never", "verify": "false"}
    r = feedbench({"dataset": dict(base, num_files_train=3)})
    assert r.rc == 0, r.output
    assert r.discovered["files"] == 3
    assert r.discovered["files_on_disk"] == 5
    assert [f["file"] for f in r.discovered["first_files"]] == \
        ["img_%d_of_5.npz" % i for i in (1, 2, 3)]
    assert r.metric["train_samples"] == 3
    assert r.metric["train_bytes_read"] == 3 * 64
    r = feedbench({"dataset": dict(base, num_files_train=6)})
    assert r.rc == 1
    assert "num_files_train asks for 6 files but data folder '%s' holds 5 npz files" % data \
        in r.output
    r = feedbench({"dataset": base})
    assert r.rc == 0, r.output
    assert r.discovered["files"] == 5 and r.metric["train_samples"] == 5


def test_imported_dlio_workload_reads_dlio_files(tmp_path):
    """A DLIO workload YAML through `feedbench import-dlio`, run as written on a dataset laid
    out as DLIO writes it (data_folder/train/img_N_of_M.npz, x (dim1, dim2, 1) in C order):
    every file read once per epoch, the bytes of every sample."""
    import subprocess
    exe = os.environ["FEEDBENCH"]
    mpiexec = os.environ.get("MPIEXEC") or "mpiexec"
    folder = tmp_path / "dlio"
    (folder / "train").mkdir(parents=True)
    for i in range(8):
        np.savez(folder / "train" / ("img_%d_of_8.npz" % (i + 1)),
                 x=np.full((64, 64, 1), i, np.uint8), y=[0])
    yaml = tmp_path / "unet3d_tiny.yaml"
    yaml.write_text("""model: unet3d
framework: pytorch
workflow:
  generate_data: False
  train: True
  checkpoint: True
dataset:
  data_folder: %s/
  format: npz
  num_files_train: 8
  num_samples_per_file: 1
  record_length: 4096
reader:
  data_loader: pytorch
  batch_size: 2
  read_threads: 2
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 2
  computation_time: 0.001
checkpoint:
  checkpoint_folder: %s
  model_size: 65536
  num_layers: 0
metric:
  au: 0.90
""" % (folder, tmp_path / "ckpt"))
    ini = tmp_path / "unet3d_tiny.ini"
    p = subprocess.run([exe, "import-dlio", str(yaml), "-o", str(ini)], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    # DLIO's checkpoint section becomes checkpoints inside training: rank 0 writes model_size
    # bytes after every epoch (checkpoint_after_epoch 1, epochs_between_checkpoints 1).
    assert "checkpoint." not in p.stderr, p.stderr
    text = ini.read_text()
    assert "folder = %s" % (tmp_path / "ckpt") in text, text
    assert "model_size_bytes = 65536" in text, text
    out = tmp_path / "out"
    p = subprocess.run([mpiexec, "--oversubscribe", "-n", "2", exe, "run", str(ini),
                        "--output", str(out), "--quiet"], capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    import glob
    import json
    s = json.load(open(glob.glob(str(out / "*" / "summary.json"))[0]))
    assert s["workload"] == "unet3d"
    assert s["format"]["discovered"]["files"] == 8
    assert s["metric"]["train_samples"] == 16
    assert s["metric"]["train_bytes_read"] == 2 * 8 * 4096
    steps = sorted(os.listdir(tmp_path / "ckpt"))
    assert len(steps) == 2, steps
    for d in steps:
        assert os.path.exists(tmp_path / "ckpt" / d / ".metadata"), d


def test_dlio_npz_collective(feedbench, tmp_path):
    """DLIO's C-order npz of one sample per file: the sample is one byte range, so collective
    MPI-IO reads it (several samples per file in C order have none and are refused)."""
    data = tmp_path / "data"
    data.mkdir()
    for i in range(4):
        np.savez(data / ("img_%d_of_4.npz" % (i + 1)), x=np.full((32, 32, 1), i, np.uint8), y=[0])
    r = feedbench({"dataset": {"data_dir": data, "format": "npz", "generate": "never",
                               "verify": "false", "file_access": "shared"},
                   "storage": {"backend": "mpiio"},
                   "storage.mpiio": {"collective": "true"}}, ranks=2)
    assert r.rc == 0, r.output
    assert r.metric["train_samples"] == 4
    assert r.metric["train_bytes_read"] == 4 * 32 * 32
