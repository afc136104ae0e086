#!/bin/bash
# How the checkpoint and training workloads scale in ranks on one machine: oversubscribed runs
# at 2, 8, 32 and 64 ranks (mpiexec --oversubscribe), tiny sizes, in a tmpfs folder. A
# measurement, not a test: it prints a table and a fitted model, and never fails on a number.
#
#   tests/perf/scale.sh         (RANKS="2 8 32 64", REPS=3, FEEDBENCH=build/feedbench)
#
# Each row is the median, column by column, of REPS runs (a loaded machine deschedules ranks:
# one run's reduction or agreement time can be several times the next one's).
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
REPS=${REPS:-3}
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
		for ((i = 0; i < REPS; i++)); do
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
with open(w + "/raw", "a") as f:
    f.write("%s %d %.6f %.3f %s %.6f %.6f %.6f\n" % (
        wl, n, t1 - t0 - own, rss, "-" if agree is None else agree, up, init, red))
PY
		done
		# the median of the runs, column by column
		[ -s "$W/raw" ] && python3 - "$W/raw" "$W/rows" <<'PY'
import statistics, sys
raw = [l.split() for l in open(sys.argv[1])]
med = lambda c: "-" if raw[0][c] == "-" else statistics.median(float(r[c]) for r in raw)
row = raw[0][:2] + [med(c) for c in range(2, 8)]
wl, n, le, rss, agree, up, init, red = row
print("%-11s %6s %14.3f %10.3f %7.3f %10.3f %8.1f %9s" % (
    wl, n, le, up, init, red, rss, agree if agree == "-" else "%.3f" % agree))
with open(sys.argv[2], "a") as f:
    f.write(" ".join(str(x) for x in row) + "\n")
PY
		rm -f "$W/raw"
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
# (name, column of the rows, unit, format, x: ranks or log2 ranks)
models = (("launch+exit", 2, "s", "%.1f", "ranks"), ("startup", 5, "s", "%.2f", "ranks"),
          ("MPI_Init", 6, "s", "%.2f", "ranks"), ("reduce", 7, "ms", "%.2f", "ranks"),
          ("RSS", 3, "MiB", "%.1f", "ranks"), ("agree", 4, "ms", "%.2f", "log2(ranks)"))
for wl in ("checkpoint", "train"):
    r = [x for x in rows if x[0] == wl]
    if len(r) < 2:
        continue
    n = [int(x[1]) for x in r]
    for name, col, unit, f, xs in models:
        if r[0][col] == "-":
            continue
        lg = xs != "ranks"
        a, b = fit([math.log2(x) if lg else x for x in n], [float(x[col]) for x in r])
        at = [a + b * (math.log2(k) if lg else k) for k in (1024, 10000)]
        print(("%-11s %s %s = %.4g + %.4g x %s: 1024 -> " + f + " %s, 10000 -> " + f + " %s")
              % (wl, name, unit, a, b, xs, at[0], unit, at[1], unit))
PY
