#!/bin/bash
# The io_uring back-end (bench/storage/uring.c): real mpiexec runs at 2 ranks of the tiny MPI
# workload (tests/mpi/tiny.ini: 8 files x 8 samples x 4 KiB, two epochs, verify = true) read
# through backend = uring, checking what a user sees: exit status, every sample verified, the
# numbers in summary.json (tests/mpi/check_summary.py), the note for formats that read one
# sample at a time, and the message naming file and offset when a file is cut short.
#
# usage: uring.sh CASE [ARGS]
#   read FORMAT ACCESS...   verified runs at io_depth 1 and 8 for each access (raw: O_DIRECT too)
#   truncated               a raw file cut short: the error names file and offset
#   pipeline                io_depth 8 kept in flight across batches: exact samples, bytes and
#                           read calls over several epochs, batches smaller and larger than the
#                           depth, read_threads x io_depth, O_DIRECT, more files than the reader
#                           keeps open
#   eio                     EIO on one queued read (faulty back-end around uring) on rank 1
# Exit status 77 means "skipped" (uring not built).
set -u

CASE=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
MPI=$HERE/../mpi
. "$HERE/../lib.sh"
FAIL_WHAT="uring $CASE"
lib_init uring
REC=4096

fb() { # fb COMMAND [--set ...]: 2 ranks on tiny.ini through uring; sets RC
	local cmd=$1
	shift
	fb_mpi 2 "$cmd" "$MPI/tiny.ini" --set "dataset.data_dir=$T/data" \
		--set "output.dir=$T/results" --set storage.backend=uring "$@" </dev/null
}

lib_need_backend uring

# check_run FORMAT DEPTH DIRECT: the one run folder says what it should, then is removed.
check_run() {
	local fmt=$1 depth=$2 direct=$3 run chk
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	# npy: one file per sample, so 64 files of one sample.
	chk=(--ranks 2 --epochs 2 --samples 128)
	[ "$fmt" = raw ] && chk+=(--bytes $((64 * REC * 2)) --ops 128)
	[ -n "$direct" ] && chk+=(--direct)
	MSG="summary.json is inconsistent"
	python3 "$MPI/check_summary.py" "$run" "${chk[@]}" 2>>"$T/err" || fail "$MSG"
	MSG="summary.json does not say backend uring with io_depth $depth"
	python3 - "$run/summary.json" "$depth" "$fmt" <<'PY' 2>>"$T/err" || fail "$MSG"
import json, sys
s = json.load(open(sys.argv[1]))
depth, fmt = int(sys.argv[2]), sys.argv[3]
assert s["storage"]["backend"] == "uring", s["storage"]["backend"]
assert s["config"]["storage"]["io_depth"] == depth, s["config"]["storage"]["io_depth"]
assert s["config"]["dataset"]["verify"] is True
note = [w for w in s["warnings"] if "reads one sample at a time" in w]
# Formats whose samples are not plain byte ranges say that they read at depth 1.
assert bool(note) == (depth > 1 and fmt != "raw"), (depth, fmt, s["warnings"])
# The depth really reached (epochs[].io_inflight_max): raw at io_depth 8 queues a batch of 8
# at once; at io_depth 1, and for the formats that read one sample at a time, each read goes
# through the ring and is waited for: one in flight (this said 0, nothing queued, before).
# The runs keep a step barrier, so the trainer never reads batches itself (its reads are plain
# calls: on one CPU without compute a loaded machine made it read them all, 0 in flight).
assert not s["binding"]["trainer_reads"], s["binding"]
inflight = max(e["io_inflight_max"] for e in s["epochs"])
want = depth if fmt == "raw" and depth > 1 else 1
assert inflight == want, f"at most {inflight} reads in flight, expected {want}"
PY
	rm -rf "$T/results"
}

direct_ok() { # O_DIRECT works where the test data lives
	mkdir -p "$T/data"
	python3 - "$T/data/probe" <<'PY'
import mmap, os, sys
p = sys.argv[1]
with open(p, "wb") as f:
    f.write(b"\0" * 4096)
fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
os.readv(fd, [mmap.mmap(-1, 4096)])
os.unlink(p)
PY
}

case $CASE in
read)
	# One dataset, every access mode the format allows, io_depth 1 and 8 (batch 8, so that a
	# batch keeps 8 reads in flight), and O_DIRECT for raw.
	fmt=$1
	shift
	access=("$@")
	for a in "${access[@]}"; do
		for depth in 1 8; do
			fb run --set "dataset.format=$fmt" --set "dataset.file_access=$a" \
				--set "storage.io_depth=$depth" --set reader.batch_size=8 \
				--set train.step_barrier=true # the readers read, not the trainer
			MSG="$fmt $a io_depth $depth: exit status $RC, want 0"
			[ "$RC" -eq 0 ] || fail "$MSG"
			check_run "$fmt" "$depth" ""
		done
	done
	if [ "$fmt" = raw ]; then
		if direct_ok; then
			for depth in 1 8; do
				fb run --set dataset.format=raw --set dataset.file_access=shared \
					--set "storage.io_depth=$depth" --set reader.batch_size=8 \
					--set storage.direct=true --set train.step_barrier=true
				MSG="raw O_DIRECT io_depth $depth: exit status $RC, want 0"
				[ "$RC" -eq 0 ] || fail "$MSG"
				check_run raw "$depth" direct
			done
		else
			echo "O_DIRECT refused by the file system of $T: not tested"
		fi
	fi
	;;
truncated)
	# Sample 2 of the third file cut at byte 1808 (the file ends at 10000): the first failed
	# read names the file and where it ended, at depth 1 the cut itself; at depth 8 the later
	# samples of the batch may report first, each at its own offset.
	fb generate --set dataset.file_access=shared
	MSG="generate: exit status $RC"
	[ "$RC" -eq 0 ] || fail "$MSG"
	victim=$(ls "$T"/data/raw-*-of-8.bin | sed -n 3p)
	truncate -s 10000 "$victim"
	for depth in 1 8; do
		fb run --set dataset.file_access=shared --set dataset.generate=never \
			--set reader.sample_shuffle=off --set reader.file_shuffle=off \
			--set "storage.io_depth=$depth" --set reader.batch_size=8
		MSG="io_depth $depth: exit status $RC, want 1"
		[ "$RC" -eq 1 ] || fail "$MSG"
		offsets='10000'
		[ "$depth" -gt 1 ] && offsets='10000|12288|16384|20480|24576|28672'
		MSG="io_depth $depth: stderr does not name the file and offset of the short read"
		grep -qE "unexpected end of file in '$victim' at offset ($offsets) " "$T/err" || fail "$MSG"
		MSG="io_depth $depth: a run folder was left under a final name"
		[ -z "$(find "$T/results" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] || fail "$MSG"
	done
	;;
pipeline)
	# Each row: batch_size read_threads prefetch_size epochs files direct. 2 ranks, per_rank,
	# raw 4 KiB samples, verify on, shuffled: every sample read once per epoch, whole.
	# 24 files of 4 samples: 12 files per rank, more than the 8 a reader keeps open, so files
	# are closed (after their own reads landed) while other reads are in flight.
	spf=4
	while read -r batch threads prefetch epochs files direct; do
		[ "$direct" = true ] && ! direct_ok && continue
		rm -rf "$T/data"
		fb run --set storage.io_depth=8 --set "reader.batch_size=$batch" \
			--set "reader.read_threads=$threads" --set "reader.prefetch_size=$prefetch" \
			--set "train.epochs=$epochs" --set "dataset.num_files_train=$files" \
			--set "dataset.num_samples_per_file=$spf" --set "storage.direct=$direct"
		echo "pipeline: batch $batch, $threads threads, prefetch $prefetch, $epochs epochs, $files files, direct $direct"
		what="batch $batch, $threads threads, prefetch $prefetch, $epochs epochs, $files files"
		MSG="$what: exit status $RC, want 0"
		[ "$RC" -eq 0 ] || fail "$MSG"
		n=$((files * spf * epochs))
		chk=(--ranks 2 --epochs "$epochs" --samples "$n" --bytes $((n * REC)) --ops "$n")
		[ "$direct" = true ] && chk+=(--direct)
		MSG="$what: summary.json is inconsistent"
		python3 "$MPI/check_summary.py" "$T"/results/*/ "${chk[@]}" 2>>"$T/err" || fail "$MSG"
		rm -rf "$T/results"
	done <<'ROWS'
3 1 2 3 8 false
16 1 2 2 8 false
3 2 1 2 24 false
16 2 3 2 24 true
ROWS
	;;
eio)
	# The 5th read of rank 1 fails with EIO inside the queue (io_depth 8, batches of 3, so
	# reads of two batches are in flight): exit 1, the error once, naming rank 1, the file and
	# the offset; no run folder.
	fb generate
	MSG="generate: exit status $RC"
	[ "$RC" -eq 0 ] || fail "$MSG"
	fb run --set dataset.generate=never --set storage.backend=faulty \
		--set storage.faulty.inner=uring --set storage.faulty.fail_op=read \
		--set storage.faulty.fail_nth=5 --set storage.faulty.fail_rank=1 \
		--set storage.faulty.fail_errno=EIO --set storage.io_depth=8 --set reader.batch_size=3
	MSG="exit status $RC, want 1"
	[ "$RC" -eq 1 ] || fail "$MSG"
	MSG="stderr does not say once: rank 1 cannot read '<file>' at offset N: Input/output error"
	[ "$(grep -c "Input/output error" "$T/err")" -eq 1 ] || fail "$MSG"
	grep -q "rank 1" "$T/err" || fail "$MSG"
	grep -qE "cannot read '$T/data/raw-[0-9]+-of-8.bin' at offset [0-9]+: Input/output error" \
		"$T/err" || fail "$MSG"
	MSG="a run folder was left under a final name"
	[ -z "$(find "$T/results" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] || fail "$MSG"
	;;
*)
	echo "uring.sh: unknown case '$CASE'" >&2
	exit 2
	;;
esac
echo "ok: uring $CASE $*"
