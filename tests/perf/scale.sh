#!/bin/bash
# How the checkpoint and training workloads scale in ranks on one machine: oversubscribed runs
# at 2, 8, 32 and 64 ranks (mpiexec --oversubscribe), tiny sizes, in a tmpfs folder. A
# measurement, not a test: it prints a table and a fitted model, and never fails on a number.
#
#   tests/perf/scale.sh                  (RANKS="2 8 32 64", FEEDBENCH=build/feedbench)
#
# Per rank count and workload:
#   launch+exit s   mpiexec's wall time (launch to the last rank's exit) minus the workload's
#                   own measured time (training: train_wall_seconds; checkpoint: the slowest
#                   rank's write + read): start-up, agreement on the config, set-up, the
#                   reductions, the result folder and the exit, together
#   startup s       summary.json timing.startup_seconds: the slowest rank's time from its
#                   main() to the workload's first timed phase (training: the first epoch;
#                   checkpoint: the first write), MPI_Init included
#   init s          timing.mpi_init_seconds: the slowest rank's MPI_Init
#   reduce ms       timing.reduce_seconds: the slowest rank's time in the end-of-run
#                   reductions of its figures to rank 0 (training: epochs, evaluation,
#                   accelerators, ranks, timeline; checkpoint: every checkpoint's per-rank
#                   figures and call counts), before summary.json is built
#   RSS MiB         peak RSS per rank (/usr/bin/time -f %M around every rank): max over ranks
#   agree ms        checkpoint: time to durable - the slowest rank's write (the agreement that
#                   every rank's bytes are durable, then .metadata and the folder fsyncs);
#                   training has no such member in summary.json ("-")
# Training uses backend = null (nothing read, verify off: null leaves buffers unfilled);
# the checkpoint workload refuses backend = null (its .metadata must be renamed into place),
# so it writes 64 KiB per rank with posix into /dev/shm.
# Fit: launch+exit, startup and reduce = a + b * ranks (rank 0 receives one record per rank),
# agree = a + b * log2(ranks) (least squares), extrapolated
# to 1 024 and 10 000 ranks: ranks sharing 2 cores, so the slope is the cost of time-sharing as
# much as that of MPI; read it as an upper bound for one machine, not a cluster's figure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FEEDBENCH=${FEEDBENCH:-$ROOT/build/feedbench}
RANKS=${RANKS:-2 8 32 64}
MPIEXEC=${MPIEXEC:-mpiexec}
W=$(mktemp -d /dev/shm/fb-scale.XXXXXX)
trap 'rm -rf "$W"' EXIT
ROOTOPT=()
[ "$(id -u)" = 0 ] && ROOTOPT=(--allow-run-as-root)

cat >"$W/train.ini" <<EOF
[workload]
name = scale_train
[dataset]
data_dir = $W/data
format = raw
num_files_train = 128
num_samples_per_file = 4
record_length_bytes = 4KiB
file_access = per_rank
verify = false
[storage]
backend = null
[reader]
batch_size = 1
read_threads = 1
[train]
epochs = 1
computation_time = 0
[output]
plots = false
EOF
cat >"$W/checkpoint.ini" <<EOF
[workload]
name = scale_checkpoint
type = checkpoint
[dataset]
data_dir = $W/ck
[checkpoint]
model_size_bytes = 64KiB
tensor_parallelism = 1
pipeline_parallelism = 1
zero_stage = 3
transfer_size = 64KiB
[storage]
backend = posix
page_cache = keep
[output]
plots = false
EOF

echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '%-11s %6s %14s %10s %7s %10s %8s %9s\n' workload ranks "launch+exit s" "startup s" \
	"init s" "reduce ms" "RSS MiB" "agree ms"
for wl in checkpoint train; do
	for n in $RANKS; do
		ranks_set=()
		[ "$wl" = checkpoint ] && ranks_set=(--set "checkpoint.model_size_bytes=$((n * 65536))")
		rm -rf "$W/res" "$W/ck" "$W/rss".*
		t0=$(date +%s.%N)
		"$MPIEXEC" "${ROOTOPT[@]}" --oversubscribe -n "$n" sh -c \
			'exec /usr/bin/time -f %M -o "$0.$$" "$@"' "$W/rss" "$FEEDBENCH" run \
			"$W/$wl.ini" "${ranks_set[@]}" -o "$W/res" -q >"$W/out" 2>&1 ||
			{
				echo "$wl on $n ranks failed:" >&2
				tail -5 "$W/out" >&2
				continue
			}
		t1=$(date +%s.%N)
		python3 - "$wl" "$n" "$t0" "$t1" "$W" <<'PY'
import glob, json, sys
wl, n, t0, t1, w = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
s = json.load(open(glob.glob(w + "/res/*/summary.json")[0]))
m, tm = s["metric"], s["timing"]
rss = max(int(open(f).read().split()[-1]) for f in glob.glob(w + "/rss.*")) / 1024
if wl == "train":
    own, agree = m["train_wall_seconds"], None
else:
    wmax = m["checkpoint_write_seconds_per_rank"]["max"]
    own = wmax + m["checkpoint_read_seconds_per_rank"]["max"]
    agree = (m["checkpoint_time_to_durable_seconds"] - wmax) * 1e3
up, init, red = tm["startup_seconds"], tm["mpi_init_seconds"], tm["reduce_seconds"] * 1e3
print("%-11s %6d %14.3f %10.3f %7.3f %10.3f %8.1f %9s" % (
    wl, n, t1 - t0 - own, up, init, red, rss, "-" if agree is None else "%.3f" % agree))
with open(w + "/rows", "a") as f:
    f.write("%s %d %.6f %.3f %s %.6f %.6f %.6f\n" % (
        wl, n, t1 - t0 - own, rss, "-" if agree is None else agree, up, init, red))
PY
	done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W/rows" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
def fit(xs, ys):
    k = len(xs); mx = sum(xs) / k; my = sum(ys) / k
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b
print("# model (least squares over the rows above), extrapolated:")
for wl in ("checkpoint", "train"):
    r = [x for x in rows if x[0] == wl]
    if len(r) < 2:
        continue
    n = [int(x[1]) for x in r]
    a, b = fit(n, [float(x[2]) for x in r])
    print("%-11s launch+exit s = %.3f + %.5f x ranks: 1024 -> %.1f s, 10000 -> %.1f s"
          % (wl, a, b, a + b * 1024, a + b * 10000))
    a, b = fit(n, [float(x[5]) for x in r])
    print("%-11s startup s = %.3f + %.5f x ranks: 1024 -> %.1f s, 10000 -> %.1f s"
          % (wl, a, b, a + b * 1024, a + b * 10000))
    a, b = fit(n, [float(x[6]) for x in r])
    print("%-11s MPI_Init s = %.3f + %.5f x ranks: 1024 -> %.1f s, 10000 -> %.1f s"
          % (wl, a, b, a + b * 1024, a + b * 10000))
    a, b = fit(n, [float(x[7]) for x in r])
    print("%-11s reduce ms = %.3f + %.4f x ranks: 1024 -> %.1f ms, 10000 -> %.1f ms"
          % (wl, a, b, a + b * 1024, a + b * 10000))
    a, b = fit(n, [float(x[3]) for x in r])
    print("%-11s RSS MiB = %.1f + %.4f x ranks: 1024 -> %.1f, 10000 -> %.1f"
          % (wl, a, b, a + b * 1024, a + b * 10000))
    if r[0][4] != "-":
        a, b = fit([math.log2(x) for x in n], [float(x[4]) for x in r])
        print("%-11s agree ms = %.3f + %.3f x log2(ranks): 1024 -> %.2f ms, 10000 -> %.2f ms"
              % (wl, a, b, a + b * 10, a + b * math.log2(10000)))
PY
