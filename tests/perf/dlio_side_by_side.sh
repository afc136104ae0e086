#!/bin/bash
# A benchmark, not a test: DLIO (dlio-benchmark 2.0.0 from PyPI) and feedbench on the same
# small workloads and the same files, alternating, printing both tools' AU, samples/s and MiB/s
# side by side (medians and ranges over the rounds, and the ratios). docs/dlio_side_by_side.md
# holds a table this script printed and what explains each difference.
#
#   tests/perf/dlio_side_by_side.sh [FEEDBENCH] [WORK_DIR]
#   FEEDBENCH  default build/feedbench;  WORK_DIR default /tmp/feedbench-dlio-sbs (kept: the
#              datasets are generated once and reused; logs, both tools' outputs, rows.jsonl)
# Environment:
#   WORKLOADS  (unet3d resnet50 unet3d_c0 resnet50_c0): the scaled-down workloads below, and
#              the same with computation_time 0 (_c0: what each tool costs per sample when
#              nothing else takes time)
#   RANKS      ("1 2"): the rank counts to run each workload at
#   ROUNDS     (3): rounds per workload and rank count, odd rounds DLIO first, even rounds
#              feedbench first
#   EPOCHS     (3)
#   VENV       (build/dlio-venv)   MPIEXEC (mpirun)
#   FB_SET     (train.step_barrier=true): --set options for every feedbench run. DLIO 2.0.0
#              calls comm.barrier() after every step (main.py, _train); `feedbench import-dlio`
#              and the shipped workloads write step_barrier = true too (kept here for INIs
#              written before they did).
#   NO_INSTALL=1  never install (Debian packages or pip); exit 77 when something is missing
#   CACHE      (warm): the page-cache state every run starts in, the same for both tools:
#              warm (every dataset file read once just before the run) or drop (the dataset's
#              pages written back (fdatasync: DONTNEED only starts the writeback of dirty pages, as a dataset
#              just generated) and evicted just before the run, posix_fadvise DONTNEED per file, as
#              vmtouch -e does; other files' pages are left alone). The share of the dataset's
#              pages in the page cache is then measured (mincore over a mapping of each file,
#              as fincore does) and recorded in each row ("cached %"), with feedbench's own
#              storage.page_cache_measured beside it.
#   BIND       (none): mpirun --bind-to for both tools. With none each rank and DLIO's worker
#              processes (or feedbench's reader threads) may use every core; mpirun's default
#              at 1 or 2 ranks binds each rank, and the processes it starts, to one core.
#   Rounds alternate the order: odd rounds DLIO first, even rounds feedbench first.
#
# How DLIO runs here (no GPU, 2 cores, Debian bookworm): DLIO 2.0.0's wheel requires
# tensorflow, torch>=2.2, torchvision, torchaudio and nvidia-dali-cuda110. PyPI has only CUDA
# builds of torch for Linux x86_64 (torch plus its nvidia-* wheels: GiBs), the PyTorch CPU index
# is not reachable from this machine, and DALI and tensorflow are not needed by the PyTorch
# loader. So:
#  - torch and mpi4py come from Debian (`make dlio-deps`: python3-torch 1.13.1, CPU only;
#    python3-mpi4py 3.1.4, built against the system Open MPI) and the venv sees them
#    (--system-site-packages, Debian's python3). DLIO's PyTorch loader uses DataLoader with
#    worker processes, persistent_workers, prefetch_factor and pin_memory, all in torch 1.13.
#  - DLIO and the packages its PyTorch path imports are installed with pip --no-deps at pinned
#    versions into the venv (DLIO_PIP below); pydftracer is required in practice: DLIO's
#    fallback when it is missing fails (utils/config.py: Profile(MODULE_CONFIG) -> TypeError).
#  - tensorflow is a stub package in the venv only (tensorflow/__init__.py, written below):
#    DLIO imports it at module level in profiler/tf_profiler.py whatever the profiler; the
#    PyTorch loader, npz/hdf5 readers and no profiler never use it, and any use raises
#    ImportError naming this script. torchvision, torchaudio and DALI are not imported on this
#    path and are not installed.
#
# The workloads (DLIO's own files: DLIO generates them once, feedbench reads the same files
# through the INI `feedbench import-dlio` writes from the same YAML):
#   unet3d    npz, 1 sample of 1 MiB per file, 64 files, batch 4, 2 read threads,
#             computation_time 0.02 s (DLIO's unet3d_a100: 140 MiB samples, batch 7, 4 threads,
#             0.636 s: scaled down to fit 2 cores and a few seconds a run)
#   resnet50  hdf5 (DLIO's PyTorch loader cannot read tfrecord), 64 samples of 144 KiB per
#             file, 16 files, batch 32, 2 read threads, computation_time 0.02 s (DLIO's
#             resnet50_a100: 110 KiB samples, 1251 per file, batch 400, 8 threads, 0.435 s)
# With CACHE=warm both tools read the files from the page cache (the datasets are far below
# RAM): what differs is each tool's own cost, not the storage. The load average and the
# measured cache state are recorded beside each run.
set -uo pipefail

fb=${1:-build/feedbench}
work=${2:-/tmp/feedbench-dlio-sbs}
workloads=${WORKLOADS:-unet3d resnet50 unet3d_c0 resnet50_c0}
ranks_list=${RANKS:-1 2}
rounds=${ROUNDS:-3}
epochs=${EPOCHS:-3}
venv=${VENV:-build/dlio-venv}
mpiexec=${MPIEXEC:-mpirun}
deb_python=/usr/bin/python3
fbset=()
for kv in ${FB_SET-train.step_barrier=true}; do fbset+=(--set "$kv"); done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
mpiflags=(--oversubscribe --bind-to "${BIND:-none}")
cache=${CACHE:-warm}
case $cache in warm | drop) ;; *) echo "CACHE must be warm or drop, not '$cache'" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] && mpiflags+=(--allow-run-as-root)
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
[ -x "$fb" ] || { echo "no feedbench at $fb (build it first)" >&2; exit 1; }
fb=$(cd "$(dirname "$fb")" && pwd)/$(basename "$fb")

# ---- DLIO's environment (idempotent: a venv whose stamp lists the same packages is reused) ----
DLIO_PIP="dlio-benchmark==2.0.0 pydftracer==1.0.2 hydra-core==1.3.2 omegaconf==2.3.0
antlr4-python3-runtime==4.9.3 PyYAML==6.0.1 packaging==24.0 psutil==5.9.8 h5py==3.11.0
pandas==2.0.3 python-dateutil==2.9.0.post0 pytz==2024.1 tzdata==2024.1 six==1.16.0"
stamp=$venv/.dlio-packages
if ! "$deb_python" -c 'import torch, mpi4py' 2>/dev/null; then
	if [ -n "${NO_INSTALL:-}" ]; then
		echo "DLIO needs Debian's python3-torch and python3-mpi4py (make dlio-deps);" \
			"NO_INSTALL is set: cannot run DLIO" >&2
		exit 77
	fi
	make -C "$here" -s dlio-deps >&2 || {
		echo "make dlio-deps failed: no torch/mpi4py for DLIO" >&2
		exit 77
	}
fi
if ! { [ "$(cat "$stamp" 2>/dev/null)" = "$DLIO_PIP" ] &&
	"$venv/bin/python" -c 'import dlio_benchmark.main' 2>/dev/null; }; then
	if [ -n "${NO_INSTALL:-}" ]; then
		echo "DLIO is not installed in $venv and NO_INSTALL is set: cannot run DLIO" >&2
		exit 77
	fi
	rm -rf "$venv"
	"$deb_python" -m venv --system-site-packages "$venv" || {
		echo "cannot create the venv $venv ($deb_python -m venv failed)" >&2
		exit 77
	}
	echo "installing DLIO 2.0.0 into $venv (pip --no-deps, pinned)" >&2
	# shellcheck disable=SC2086
	if ! flock /tmp/pip.lock "$venv/bin/pip" install -q --no-deps $DLIO_PIP \
		>"$work/pip.log" 2>&1; then
		echo "DLIO could not be installed; pip said (last lines of $work/pip.log):" >&2
		tail -15 "$work/pip.log" >&2
		exit 77
	fi
	site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	mkdir -p "$site/tensorflow"
	cat >"$site/tensorflow/__init__.py" <<'PY'
# Stub written by feedbench's tests/perf/dlio_side_by_side.sh, in this venv only: DLIO 2.0.0
# imports tensorflow at module level (profiler/tf_profiler.py) even with no profiler; the
# PyTorch loader never uses it. Any use fails here.
def __getattr__(name):
    raise ImportError("tensorflow is a stub in this venv (feedbench "
                      "tests/perf/dlio_side_by_side.sh): tensorflow." + name + " is unavailable")
PY
	if ! err=$("$venv/bin/python" -c 'import dlio_benchmark.main' 2>&1); then
		echo "DLIO is installed but does not import:" >&2
		echo "$err" | tail -5 >&2
		exit 77
	fi
	printf '%s' "$DLIO_PIP" >"$stamp"
fi
dlio=$venv/bin/dlio_benchmark
py=$venv/bin/python

# ---- the workloads, as DLIO YAMLs ---------------------------------------------------------
# wl_yaml NAME DATA_FOLDER COMPUTE_TIME: the YAML on stdout.
wl_yaml()
{
	case $1 in
	unet3d*) fmt=npz spf=1 rec=1048576 files=64 batch=4 ;;
	resnet50*) fmt=hdf5 spf=64 rec=147456 files=16 batch=32 ;;
	*) echo "unknown workload $1 (unet3d, resnet50, unet3d_c0, resnet50_c0)" >&2; return 1 ;;
	esac
	cat <<YAML
model: $1
framework: pytorch
workflow:
  generate_data: False
  train: True
dataset:
  data_folder: $2
  format: $fmt
  num_files_train: $files
  num_samples_per_file: $spf
  record_length: $rec
reader:
  data_loader: pytorch
  batch_size: $batch
  read_threads: 2
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: $epochs
  computation_time: $3
YAML
}

now() { date +%s.%N; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# cache_set DATA: the state every run starts in (CACHE); cache_pct DATA: the share of the
# dataset's pages in the page cache now, measured with mincore (fincore's way), in percent.
cache_set() {
	if [ "$cache" = warm ]; then
		find "$1" -type f -exec cat {} + >/dev/null
	else
		"$deb_python" - "$1" <<'PY'
import os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        fd = os.open(os.path.join(d, f), os.O_RDONLY)
        os.fdatasync(fd)  # dirty pages (a dataset just generated) are not dropped
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
	fi
}
cache_pct() {
	"$deb_python" - "$1" <<'PY'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long)
libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
page = mmap.PAGESIZE
have = total = 0
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        p = os.path.join(d, f)
        n = os.path.getsize(p)
        if n == 0:
            continue
        fd = os.open(p, os.O_RDONLY)
        addr = libc.mmap(None, n, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        os.close(fd)
        if addr in (None, ctypes.c_void_p(-1).value):
            sys.exit("cannot map " + p)
        pages = (n + page - 1) // page
        vec = (ctypes.c_ubyte * pages)()
        if libc.mincore(addr, n, vec) != 0:
            sys.exit("mincore failed on " + p)
        libc.munmap(addr, n)
        have += sum(v & 1 for v in vec)
        total += pages
print(f"{100.0 * have / total:.1f}" if total else "nan")
PY
}

# run_dlio WL N ROUND and run_fb WL N ROUND: one run each, a row in rows.jsonl (CACHED_PCT:
# the measured cache state it started in).
run_dlio() {
	local wl=$1 n=$2 r=$3 out l0 t0 t1
	out=$work/dlio-$wl-$n-$r
	rm -rf "$out"
	l0=$(load1) t0=$(now)
	"$mpiexec" "${mpiflags[@]}" -n "$n" "$dlio" --config-dir "$conf" \
		workload="$wl" hydra.run.dir="$out" >"$out.log" 2>&1 ||
		{ echo "DLIO run failed: see $out.log" >&2; exit 1; }
	t1=$(now)
	"$py" - "$out" "$wl" "$n" "$r" "$t0" "$t1" "$l0" "$(load1)" \
		>>"$work/rows.jsonl" <<'PY' || exit 1
# DLIO's own figures from its summary.json, plus (from its per-rank N_output.json) the
# steady-state split DLIO records but does not report: steps 2.. of each epoch, step time
# (load + compute, no barrier) and load (data wait) per step.
import datetime, glob, json, os, statistics, sys
out, wl, n, r, t0, t1, l0, l1 = sys.argv[1:]
s = json.load(open(out + "/summary.json"))
m = s["metric"]
ts = lambda x: datetime.datetime.fromisoformat(x).timestamp()
inrun = ts(s["end"]) - ts(s["start"])
proc = comp = load = 0.0
loads, first = [], []
for f in glob.glob(out + "/*_output.json"):
    o = json.load(open(f))
    for ep, e in o.items():
        if not ep.isdigit():
            continue
        for b in e["proc"]:
            p, ld, c = e["proc"][b], e["load"][b], e["compute"][b]
            if ep == "1":
                first.append(p[0])
            proc += sum(p[1:]); comp += sum(c[1:]); load += sum(ld[1:]); loads += ld[1:]
print(json.dumps({
    "wl": wl, "ranks": int(n), "tool": "dlio", "round": int(r),
    "au_dlio": m["train_au_mean_percentage"],
    "sps_dlio": m["train_throughput_mean_samples_per_second"],
    "mib": m["train_io_mean_MB_per_second"],
    "au_steady": 100 * comp / proc if proc > 0 else None,
    "wait_pct": 100 * load / proc if proc > 0 else None,
    "other_ms": 1000 * (proc - load - comp) / len(loads) if loads else None,
    "first_step_s": max(first) if first else None,
    "process_s": float(t1) - float(t0),
    "startup_s": float(t1) - float(t0) - inrun,
    "cached_pct": float(os.environ["CACHED_PCT"]),
    "load": (float(l0) + float(l1)) / 2}))
PY
}
run_fb() {
	local wl=$1 n=$2 r=$3 out l0 t0 t1
	out=$work/fb-$wl-$n-$r
	rm -rf "$out"
	l0=$(load1) t0=$(now)
	"$mpiexec" "${mpiflags[@]}" -n "$n" "$fb" run "$work/$wl.ini" -q -o "$out" \
		--set output.plots=false "${fbset[@]}" >"$out.log" 2>&1 ||
		{ echo "feedbench run failed: see $out.log" >&2; exit 1; }
	t1=$(now)
	"$py" - "$out" "$wl" "$n" "$r" "$t0" "$t1" "$l0" "$(load1)" \
		>>"$work/rows.jsonl" <<'PY' || exit 1
import glob, json, os, sys
out, wl, n, r, t0, t1, l0, l1 = sys.argv[1:]
s = json.load(open(glob.glob(out + "/*/summary.json")[0]))
pc = [p["resident_percent"] for p in s["storage"].get("page_cache_measured", [])
      if p["epoch"] == 0 and p["when"] == "before"]
m = s["metric"]; d = m["dlio_comparable"]
lost = s["repetitions"][0]["lost_time"]
print(json.dumps({
    "wl": wl, "ranks": int(n), "tool": "feedbench", "round": int(r),
    "au_dlio": d["train_au_mean_percentage"],
    "sps_dlio": d["train_throughput_mean_samples_per_second"],
    "mib": m["train_bandwidth_MiB_per_second"],
    "au_fb": m["train_au_mean_percentage"],
    "sps_fb": m["train_samples_per_second"],
    "wait_pct": 100 * lost["data_wait"],
    "lat_ms": 1000 * m["train_latency_seconds"]["p50"],
    "process_s": float(t1) - float(t0),
    "startup_s": float(t1) - float(t0) - m["train_wall_seconds"],
    "cached_pct": float(os.environ["CACHED_PCT"]),
    "fb_cached_pct": pc[0] if pc else None,
    "load": (float(l0) + float(l1)) / 2}))
PY
}

: >"$work/rows.jsonl"
for wl in $workloads; do
	base=${wl%_c0}
	compute=0.02
	[ "$wl" != "$base" ] && compute=0
	data=$work/data-$base
	conf=$work/conf-$wl
	mkdir -p "$conf/workload"
	wl_yaml "$wl" "$data" "$compute" >"$conf/workload/$wl.yaml" || exit 2
	# The dataset, once per base workload (DLIO's generator, 1 rank: the files do not depend
	# on the rank count).
	if [ ! -e "$data/.generated" ]; then
		rm -rf "$data"
		"$mpiexec" "${mpiflags[@]}" -n 1 "$dlio" --config-dir "$conf" workload="$wl" \
			++workload.workflow.generate_data=True ++workload.workflow.train=False \
			hydra.run.dir="$work/gen-$base" >"$work/gen-$base.log" 2>&1 ||
			{ echo "DLIO could not generate $data: see $work/gen-$base.log" >&2; exit 1; }
		touch "$data/.generated"
	fi
	"$fb" import-dlio "$conf/workload/$wl.yaml" -o "$work/$wl.ini" 2>"$work/import-$wl.log" ||
		{ cat "$work/import-$wl.log" >&2; exit 1; }
	for n in $ranks_list; do
		for r in $(seq "$rounds"); do
			order="dlio fb"
			((r % 2)) || order="fb dlio"
			for tool in $order; do
				cache_set "$data"
				CACHED_PCT=$(cache_pct "$data") || exit 1
				export CACHED_PCT
				run_"$tool" "$wl" "$n" "$r"
			done
			echo "$wl ranks $n round $r done (load $(load1))" >&2
		done
	done
done

# ---- what DLIO's per-step cost is made of (measured here, one process at a time) ------------
# DLIO's pieces alone, outside DLIO: its Python import, its compute emulation (time.sleep),
# its readers' per-sample calls (ON_DEMAND: open, read, close per sample), and the PyTorch
# DataLoader hand-off (2 worker processes, batch collation, shared-memory transfer) with no I/O
# at all. feedbench's counterparts are in its summary.json (read latency, timing precision).
if [ -z "${NO_EXPLAIN:-}" ]; then
	l0=$(load1)
	# DLIO's own read path without worker processes (read_threads 0: its reader and the
	# collation run in the trainer process), computation_time 0, 1 rank: its data wait per
	# sample is what its Python costs per sample before any hand-off between processes.
	: >"$work/rt0.jsonl"
	for wl in $workloads; do
		base=${wl%_c0}
		[ -e "$work/rt0-$base.done" ] && continue
		out=$work/dlio-rt0-$base
		rm -rf "$out"
		wl_yaml "$base" "$work/data-$base" 0 >"$work/conf-$wl/workload/rt0-$base.yaml"
		"$mpiexec" "${mpiflags[@]}" -n 1 "$dlio" --config-dir "$work/conf-$wl" \
			workload="rt0-$base" ++workload.reader.read_threads=0 \
			hydra.run.dir="$out" >"$out.log" 2>&1 ||
			{ echo "DLIO run failed: see $out.log" >&2; exit 1; }
		"$py" - "$out" "$base" >>"$work/rt0.jsonl" <<'PY' || exit 1
import glob, json, statistics, sys
out, base = sys.argv[1:]
o = json.load(open(glob.glob(out + "/0_output.json")[0]))
s = json.load(open(out + "/summary.json"))
ld = [x for ep, e in o.items() if ep.isdigit() for x in e["load"]["block1"][1:]]
print(json.dumps({"base": base, "load": ld,
                  "sps": s["metric"]["train_throughput_mean_samples_per_second"]}))
PY
		touch "$work/rt0-$base.done"
	done
	"$py" - "$work" "$workloads" >"$work/explain.md" <<'PY' || exit 1
import glob, json, os, statistics, subprocess, sys, time
import numpy as np
work, wls = sys.argv[1], sys.argv[2].split()
rows = []
def med(f, n):
    v = []
    for _ in range(n):
        t = time.perf_counter(); f(); v.append(time.perf_counter() - t)
    return statistics.median(v), min(v), max(v)
def row(name, m, unit, scale):
    rows.append(f"| {name} | {m[0]*scale:.4g} [{m[1]*scale:.4g}–{m[2]*scale:.4g}] {unit} |")
py = sys.executable
row("`import dlio_benchmark.main` (a new Python process)",
    med(lambda: subprocess.run([py, "-c", "import dlio_benchmark.main"], check=True), 3), "s", 1)
row("`import torch` alone (a new Python process)",
    med(lambda: subprocess.run([py, "-c", "import torch"], check=True), 3), "s", 1)
row("`python -c pass` (interpreter start)",
    med(lambda: subprocess.run([py, "-c", "pass"], check=True), 3), "s", 1)
for c in (0.02,):
    m = med(lambda: time.sleep(c), 200)
    row(f"time.sleep({c}) overshoot (DLIO's compute emulation; 200 calls)",
        (m[0] - c, m[1] - c, m[2] - c), "ms", 1000)
for base in dict.fromkeys(w.removesuffix("_c0") for w in wls):
    files = sorted(glob.glob(f"{work}/data-{base}/train/*"))[:32]
    if not files:
        continue
    if files[0].endswith(".npz"):
        it = iter(files * 4)
        m = med(lambda: np.load(next(it), allow_pickle=True)["x"][..., 0], 64)
        row(f"{base}: one sample through DLIO's npz reader calls (np.load(f)['x'][..., 0])", m,
            "ms", 1000)
        rec = np.load(files[0])["x"][..., 0].nbytes
    else:
        import h5py
        def one(f=iter(files * 64), k=iter(range(10**9))):
            h = h5py.File(next(f), "r"); h["records"][next(k) % 64]; h.close()
        m = med(one, 256)
        row(f"{base}: one sample through DLIO's hdf5 reader calls (File, ['records'][i], close)",
            m, "ms", 1000)
        with h5py.File(files[0], "r") as h:
            rec = h["records"][0].nbytes
    fd = os.open(files[0], os.O_RDONLY)
    m = med(lambda: os.pread(fd, rec, 0), 256)
    os.close(fd)
    row(f"{base}: os.pread of the same {rec} bytes, file kept open (the floor)", m, "ms", 1000)
    # The DataLoader hand-off alone: DLIO returns a record-sized array per sample
    # (its resized_image), 2 workers, prefetch_factor ceil(2/2), persistent workers, fork.
    import torch
    from torch.utils.data import DataLoader, Dataset
    img = np.random.randint(255, size=rec, dtype=np.uint8)
    class D(Dataset):
        def __len__(self): return 1024 if rec < 2**19 else 128
        def __getitem__(self, i): return img
    batch = 32 if rec < 2**19 else 4
    dl = DataLoader(D(), batch_size=batch, num_workers=2, prefetch_factor=1,
                    persistent_workers=True, multiprocessing_context="fork", drop_last=True)
    per = []
    for ep in range(2):
        t = time.perf_counter()
        for b in dl:
            now = time.perf_counter(); per.append((now - t) / batch); t = now
    steady = per[len(per) // 2:]
    row(f"{base}: torch DataLoader hand-off, no I/O, per sample (batch {batch}, 2 workers)",
        (statistics.median(steady), min(steady), max(steady)), "ms", 1000)
    del dl
for l in open(f"{work}/rt0.jsonl"):
    d = json.loads(l)
    batch = 32 if d["base"].startswith("resnet") else 4
    v = [x / batch for x in d["load"]]
    row(f"{d['base']}: DLIO itself, read_threads 0, computation_time 0, 1 rank: data wait per "
        f"sample ({d['sps']:.0f} samples/s)",
        (statistics.median(v), min(v), max(v)), "ms", 1000)
print("| DLIO piece, measured alone | median [min–max] |")
print("|---|---|")
print("\n".join(rows))
PY
	cpx=$(dirname "$fb")/compute_precision
	if [ -x "$cpx" ]; then
		echo
		echo "feedbench's compute emulation (build/compute_precision 100):"
		echo '```'
		"$cpx" 100
		echo '```'
	fi >>"$work/explain.md"
	echo "(load average $l0 before, $(load1) after)" >>"$work/explain.md"
fi

# ---- the table ------------------------------------------------------------------------------
"$py" - "$work/rows.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def cell(v):
    v = [x for x in v if x is not None]
    if not v:
        return "–", None
    med = statistics.median(v)
    return f"{med:.4g} [{min(v):.4g}–{max(v):.4g}]", med
figs = [("au_dlio", "AU % (DLIO's definition)"),
        ("au_steady", "AU % of DLIO's step times (steps 2.., no barrier)"),
        ("au_fb", "AU % (feedbench headline)"),
        ("sps_dlio", "samples/s (DLIO's definition)"),
        ("sps_fb", "samples/s (feedbench, epoch wall)"),
        ("mib", "MiB/s (each tool's own)"),
        ("wait_pct", "data wait, % of step time (steps 2..)"),
        ("other_ms", "DLIO step time beyond data wait and configured compute, ms"),
        ("lat_ms", "feedbench read call latency p50, ms"),
        ("process_s", "process wall s"),
        ("startup_s", "start-up + exit s"),
        ("cached_pct", "dataset in the page cache at the start, % (mincore)"),
        ("fb_cached_pct", "the same, feedbench's page_cache_measured before epoch 1, %"),
        ("load", "load average (1 min)")]
print("| workload | ranks | figure | DLIO median [min–max] | feedbench median [min–max] | feedbench / DLIO |")
print("|---|---|---|---|---|---|")
keys = sorted({(r["wl"], r["ranks"]) for r in rows}, key=lambda k: (k[0], k[1]))
for wl, n in keys:
    for key, name in figs:
        dv = [r.get(key) for r in rows if (r["wl"], r["ranks"], r["tool"]) == (wl, n, "dlio")]
        fv = [r.get(key) for r in rows if (r["wl"], r["ranks"], r["tool"]) == (wl, n, "feedbench")]
        (ds, dm), (fs, fm) = cell(dv), cell(fv)
        if ds == "–" and fs == "–":
            continue
        if wl.endswith("_c0") and key.startswith("au"):
            continue  # computation_time 0: AU is 0 by definition
        ratio = (f"{fm / dm:.3g}" if dm and fm is not None and
                 key not in ("load", "cached_pct", "fb_cached_pct") else "")
        print(f"| {wl} | {n} | {name} | {ds} | {fs} | {ratio} |")
PY
[ -s "$work/explain.md" ] && { echo; cat "$work/explain.md"; }
exit 0
