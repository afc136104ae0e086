#!/bin/bash
# The lab tests (label `lab`): a real striped file system (CephFS, OSDs behind their own
# rate-limited links) and two emulated hosts, started by the `up` case (ctest fixture setup)
# and stopped by `down` (fixture cleanup, which runs even when a test failed; a watcher also
# tears the lab down if ctest itself is killed).
#
# usage: labtest.sh up|down|stripe|small|hosts|srun|formats|s3_physics|s3_train
# environment (tests/lab/tests.cmake): FEEDBENCH, FEEDBENCH_LAB_ID, FEEDBENCH_LAB_DIR
# Exit 77 (ctest: SKIPPED) with the reason when the lab cannot run on this machine.
set -u

CASE=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_SH=$HERE/lab.sh
: "${FEEDBENCH:?FEEDBENCH not set}"
ID=${FEEDBENCH_LAB_ID:-main}
LAB=${FEEDBENCH_LAB_DIR:-/tmp/feedbench-lab-$ID}
SKIP=77

need_lab() {
	local st
	st=$("$LAB_SH" status 2>&1) && return 0
	if [ -f "$LAB/skip-reason" ]; then
		echo "SKIPPED: the lab cannot start here: $(cat "$LAB/skip-reason")"
		exit $SKIP
	fi
	echo "FAIL ($CASE): the lab is not up: $st (did lab.up fail? see its output)" >&2
	exit 1
}

# The lab's radosgw (S3): up, or the test fails with the reason it did not start.
need_rgw() {
	[ ! -f "$LAB/rgw/failed" ] || fail "radosgw did not start in the lab: $(cat "$LAB/rgw/failed")"
	[ -f "$LAB/rgw/up" ] || fail "the lab runs no radosgw ($LAB/rgw/up missing)"
}

# A private work folder and a private folder on the file system, both removed at exit.
work() {
	T=$(mktemp -d /tmp/fb_lab_XXXXXX)
	D=fb-$CASE-$$
	trap '[ -n "${KEEP:-}" ] || rm -rf "$T" "$LAB/mnt/h1/$D"' EXIT
}

fail() {
	echo "FAIL ($CASE): $*" >&2
	exit 1
}

# Live statistics under srun (tests/live/live.ini: 1 rank on each emulated host, per-rank files
# on CephFS, a line every 0.25 s, 50 ms of compute per step): stderr read as it arrives, the lines, live.csv and ranks.csv checked as under
# mpiexec (tests/live/check_live.py): plain lines, one per interval, arriving during the run.
srun_live() {
	local run
	python3 "$HERE/../live/check_live.py" stamp "$T/live.err" -- "$LAB_SH" srun -N 2 \
		--ntasks-per-node=1 --mpi=pmix "$FEEDBENCH" run "$HERE/../live/live.ini" \
		--set "dataset.data_dir=$LAB/cephfs/$D" --set "output.dir=$T/live" \
		--set train.computation_time=50ms >"$T/live.out" ||
		fail "feedbench run under srun exited $? ($(tail -n 3 "$T/live.err"))"
	run=$(dirname "$(ls "$T"/live/*/summary.json)")
	python3 - "$run" <<'PY' || fail "the srun run did not span both hosts"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
hosts = sorted(r["host"] for r in s["ranks"])
assert hosts == ["labh1", "labh2"], hosts
PY
	python3 "$HERE/../live/check_live.py" check "$run" "$T/live.err" --interval 0.25 --epochs 2 ||
		fail "live statistics under srun"
}

case $CASE in
up)
	# ctest is our parent: when it goes away (killed, interrupted), the lab goes too.
	exec "$LAB_SH" up --owner "$PPID"
	;;
down)
	if [ -f "$LAB/skip-reason" ] && [ ! -f "$LAB/up" ]; then
		echo "SKIPPED: the lab did not start: $(cat "$LAB/skip-reason")"
		rm -rf "$LAB"
		exit $SKIP
	fi
	"$LAB_SH" down || exit 1
	# After the lab is stopped: no lab process, no lab mount, no lab namespace.
	left=""
	for p in $(grep -lsF -- "$LAB/" /proc/[0-9]*/cmdline | cut -d/ -f3); do
		# the grep above named the folder too; it is gone by now
		[ "$p" != $$ ] && [ -d "/proc/$p" ] && left="$left $p ($(cat "/proc/$p/comm"))"
	done
	[ -z "$left" ] || fail "processes left: $left"
	! grep -qF " $LAB/" /proc/self/mounts || fail "mounts left under $LAB"
	! ip netns list | grep -q "^fblab-$ID-" || fail "namespaces left"
	;;
stripe | small | hosts)
	need_lab
	work
	python3 "$HERE/stripe_lab.py" --feedbench "$FEEDBENCH" --work "$T" --case "$CASE" \
		--tag "$D" --file-mib 48 --assert || fail "stripe_lab.py --case $CASE"
	;;
srun)
	# The 2-host sweep launched as users launch it under Slurm: srun --mpi=pmix.
	need_lab
	[ ! -f "$LAB/slurm/failed" ] || fail "Slurm did not start in the lab: $(cat "$LAB/slurm/failed")"
	[ -f "$LAB/slurm/up" ] || {
		echo "SKIPPED: the lab has no Slurm (slurmctld, slurmd, srun not installed: make lab-deps)"
		exit $SKIP
	}
	work
	srun_live
	python3 "$HERE/stripe_lab.py" --feedbench "$FEEDBENCH" --work "$T" --case hosts \
		--launcher srun --counts 1,4 --tag "$D" --file-mib 48 --assert ||
		fail "stripe_lab.py --case hosts --launcher srun"
	;;
formats)
	need_lab
	work
	python3 "$HERE/formats_lab.py" --feedbench "$FEEDBENCH" --work "$T" --tag "$D" ||
		fail "formats_lab.py"
	;;
s3_physics)
	# GETs through radosgw against the prediction from the per-OSD limit and the placement
	# of the object's RADOS pieces read back (tests/lab/s3_lab.py check)
	need_lab
	need_rgw
	work
	python3 "$HERE/s3_lab.py" check --work "$T" --tag "$D" || fail "s3_lab.py check"
	;;
s3_train)
	# feedbench with backend = s3 on radosgw from both emulated hosts (tests/lab/s3_train_lab.py)
	need_lab
	need_rgw
	"$FEEDBENCH" list | grep -qE '^ +s3 +built' || {
		why=$("$FEEDBENCH" list | grep -E '^ +s3 ' | sed 's/^ *//')
		echo "SKIPPED: the s3 back-end is not built: ${why:-feedbench list does not name it}"
		exit $SKIP
	}
	work
	python3 "$HERE/s3_train_lab.py" --feedbench "$FEEDBENCH" --work "$T" --tag "$D" ||
		fail "s3_train_lab.py"
	;;
*)
	echo "usage: $0 up|down|stripe|small|hosts|srun|formats|s3_physics|s3_train" >&2
	exit 2
	;;
esac
