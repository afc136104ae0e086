#!/bin/bash
# Hostile inputs and shared folders (docs/failures.md 26-30): files planted where feedbench writes (links,
# FIFOs, folders), names that are paths, malformed JSON inputs, full disks, signals, pauses and
# mismatched launches. Each case checks what a user sees (exit status, the message) and that
# no file outside the output was touched.
#
# usage: hostile.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u

CASE=$1
. "$(dirname "$0")/../lib.sh"
lib_init hostile
# A tmpfs mounted by a case (full_disk_plots) goes before the folder holding it; the runs
# started in the background are stopped before that.
lib_on_exit '[ -z "${MNT:-}" ] || umount "$MNT" 2>/dev/null'

# A file nobody may touch: its content is checked at the end of a case.
echo "precious" >"$T/victim"
victim_intact() {
	[ "$(cat "$T/victim")" = precious ] || fail "a file outside the output was overwritten"
}

# config NAME [extra INI text]: a tiny dataset (2 files x 4 samples of 4 KiB), kept.
config() {
	local name=$1
	shift
	cat >"$T/$name.ini" <<INI
[workload]
name = $name
[dataset]
data_dir = $T/data
format = ${FORMAT:-raw}
num_files_train = 2
num_samples_per_file = 4
record_length_bytes = 4096
keep_files = true
[reader]
batch_size = 2
[train]
epochs = ${EPOCHS:-1}
computation_time = ${CTIME:-0}
watchdog = ${WATCHDOG:-20s}
[output]
dir = $T/results
plots = ${PLOTS:-false}
$*
INI
}

# fb ARGS...: feedbench as one process (MPI singleton) under a time limit; sets RC.
fb() {
	timeout -k 5 60 "$FEEDBENCH" "$@" >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "feedbench $* hung (killed after 60 s)"
}

case $CASE in
compare_json_symlink)
	# The temporary name of an atomic write is random (".out.json.tmp-XXXXXX", bench/safefile.c),
	# so no link can be planted there in advance; what keeps a link raced in under it from
	# redirecting the write is how the file is made: created with O_CREAT | O_EXCL |
	# O_NOFOLLOW (an existing name, link or not, is never opened) and renamed onto the target.
	# strace shows what the code does; the links planted under the target are checked below.
	config cj
	fb run "$T/cj.ini" -q
	expect_rc 0
	fb run "$T/cj.ini" -q
	expect_rc 0
	runs=("$T"/results/cj-*)
	[ "${#runs[@]}" -eq 2 ] || fail "expected two run folders: ${runs[*]}"
	command -v strace >/dev/null || fail "strace is not installed (make deps installs it)"
	strace -f -qq -e trace=openat,rename -o "$T/strace" \
		"$FEEDBENCH" compare "${runs[0]}" "${runs[1]}" --json "$T/out.json" >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -le 3 ] || fail "compare exited $RC"
	tmpname=$(grep -oE "openat\(AT_FDCWD, \"$T/\.out\.json\.tmp-[A-Za-z0-9]{6}\", [^)]*\)" "$T/strace" | head -1)
	[ -n "$tmpname" ] || fail "no temporary .out.json.tmp-XXXXXX opened: $(grep out.json "$T/strace")"
	for flag in O_CREAT O_EXCL O_NOFOLLOW; do
		grep -q "$flag" <<<"$tmpname" || fail "the temporary file is opened without $flag: $tmpname"
	done
	grep -qE "rename\(\"$T/\.out\.json\.tmp-[A-Za-z0-9]{6}\", \"$T/out\.json\"\) = 0" "$T/strace" ||
		fail "out.json is not renamed into place from its temporary file"
	victim_intact
	[ -f "$T/out.json" ] && [ ! -L "$T/out.json" ] || fail "out.json is not a regular file"
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/out.json" ||
		fail "out.json is not JSON"
	# A link at the target itself is refused before anything is read (exit 2), the link
	# and its target left alone.
	rm -f "$T/out.json"
	ln -s "$T/victim" "$T/out.json"
	fb compare "${runs[0]}" "${runs[1]}" --json "$T/out.json"
	expect_rc 2
	expect_err "cannot write '$T/out.json': it is a symbolic link"
	victim_intact
	[ -L "$T/out.json" ] || fail "the planted link out.json was replaced"
	# No temporary file is left behind.
	left=$(find "$T" -maxdepth 1 -name '.out.json.tmp*')
	[ -z "$left" ] || fail "temporary files left: $left"
	;;
generate_symlink | generate_fifo | generate_hardlink)
	# Generation never writes through a link, into a FIFO or into a file with other links
	# planted under a data file's name: exit 1, naming the file; the target is untouched.
	config gs
	mkdir -p "$T/data"
	case $CASE in
	generate_symlink) ln -s "$T/victim" "$T/data/raw-1-of-2.bin" ;;
	generate_fifo) mkfifo "$T/data/raw-1-of-2.bin" ;;
	generate_hardlink) ln "$T/victim" "$T/data/raw-1-of-2.bin" ;;
	esac
	fb generate "$T/gs.ini"
	expect_rc 1
	expect_err "refusing to write '$T/data/raw-1-of-2.bin'"
	victim_intact
	[ ! -e "$T/data/feedbench-manifest.json" ] || fail "a manifest was written"
	;;
read_fifo | read_fifo_uring)
	# A FIFO in place of a data file never blocks a run, even with the watchdog off: a
	# generated dataset refuses it before reading, naming it; bring-your-own data (no
	# manifest) is refused by the reader without blocking.
	st=posix
	[ "$CASE" = read_fifo_uring ] && st=uring
	FORMAT=npy WATCHDOG=0 config rf "[storage]
backend = $st"
	fb generate "$T/rf.ini"
	expect_rc 0
	f=$(ls "$T"/data/*.npy | tail -1)
	rm "$f"
	mkfifo "$f"
	fb run "$T/rf.ini" --set dataset.generate=never
	expect_rc 1
	expect_err "'$f' is a FIFO, not a regular file"
	rm "$T/data/feedbench-manifest.json"
	fb run "$T/rf.ini" --set dataset.generate=never --set dataset.verify=false
	expect_rc 1
	expect_err "not a regular file"
	[ -z "$(find "$T/results" -name summary.json ! -path '*.unfinished/*' 2>/dev/null)" ] ||
		fail "results were written under a final name"
	for s in $(find "$T/results" -name summary.json 2>/dev/null); do
		grep -q '"interrupted": true' "$s" || fail "$s is not marked interrupted"
	done
	;;
set_mpiio_empty_name)
	# --set storage.mpiio.=x is refused (it used to abort inside MPI_Info_set).
	config sm "[storage]
backend = mpiio"
	fb validate "$T/sm.ini" --set storage.mpiio.=x
	expect_rc 2
	expect_err "--set storage.mpiio.=x: an MPI-IO hint needs a name"
	fb run "$T/sm.ini" --set storage.mpiio.=x
	expect_rc 2
	;;
name_escape)
	# workload.name = ../../escape never puts a run folder outside --output.
	config ne
	mkdir -p "$T/a/b/out"
	fb run "$T/ne.ini" --set "workload.name=../../escape" --output "$T/a/b/out"
	expect_rc 2
	expect_err "cannot name a results folder"
	[ ! -e "$T/a/escape" ] && [ -z "$(ls -A "$T/a/b/out")" ] ||
		fail "something was written: $(find "$T/a")"
	;;
plot_many_keys | plot_malformed | plot_point_escape | plot_zip_lengths)
	# sweep_results.json is input: more than 16 keys, values of the wrong type and point
	# folders outside the sweep are refused with exit 1 and a message, not a crash, and
	# nothing is written outside the sweep folder.
	S=$T/sweep
	mkdir -p "$S/p1" "$T/outside"
	echo '{}' >"$S/sweep.json"
	cp "$T/victim" "$T/outside/report.md"
	case $CASE in
	plot_many_keys)
		python3 - "$S/sweep_results.json" <<'PY'
import json, sys
keys = [{"key": "reader.k%d" % i, "name": "k%d" % i, "numeric": True,
         "canonical": ["1", "2"], "values": ["1", "2"]} for i in range(40)]
json.dump({"keys": keys, "points": [{"dir": "p1"}]}, open(sys.argv[1], "w"))
PY
		want="40 keys (a sweep has at most 16)"
		;;
	plot_malformed)
		echo '{"keys": [{"key": "reader.batch_size", "name": "batch_size", "numeric": true,
		  "canonical": [1, null], "values": ["1", "2"]}], "points": [{"dir": "p1"}]}' \
			>"$S/sweep_results.json"
		want="keys[0] has a value that is not a string"
		;;
	plot_zip_lengths)
		# Zipped keys walk their lists together: lists of other lengths would index past
		# the end of the shorter one.
		echo '{"keys": [{"key": "dataset.format", "name": "format", "numeric": false,
		  "zipped": true, "canonical": ["raw", "wds"], "values": ["raw", "wds"]},
		  {"key": "dataset.num_files_train", "name": "num_files_train", "numeric": true,
		  "zipped": true, "canonical": ["4"], "values": ["4"]}],
		  "points": [{"dir": "p1"}]}' >"$S/sweep_results.json"
		want="keys[1] is zipped with 1 values, another with 2"
		;;
	plot_point_escape)
		# The point names a folder outside that holds a summary.json of a real run.
		config pe
		fb run "$T/pe.ini" -q
		expect_rc 0
		cp "$T"/results/pe-*/summary.json "$T/outside/"
		echo '{"keys": [], "points": [{"dir": "../outside"}]}' >"$S/sweep_results.json"
		want="points[0].dir '../outside' is not a folder inside the sweep"
		;;
	esac
	fb plot "$S"
	expect_rc 1
	expect_err "$want"
	[ "$(cat "$T/outside/report.md")" = precious ] || fail "report.md outside was rewritten"
	;;
compare_point_escape | compare_summary_link)
	# Files inside folders feedbench reads as its own (a sweep's points, a run folder's
	# summary.json) are not followed out of them; a path the user gives may be a link.
	config ce
	fb run "$T/ce.ini" -q
	expect_rc 0
	R=$(echo "$T"/results/ce-*)
	mkdir -p "$T/outside"
	cp "$R/summary.json" "$T/outside/summary.json"
	case $CASE in
	compare_point_escape)
		S=$T/sweep
		mkdir -p "$S"
		echo '{"keys": [], "points": [{"dir": "../outside", "label": "x", "done": true}]}' \
			>"$S/sweep_results.json"
		fb compare "$S" "$R" --allow-cached
		expect_rc 3 # compare's status for an input it cannot use
		expect_err "points[0].dir '../outside' is not a folder inside the sweep"
		;;
	compare_summary_link)
		mv "$R/summary.json" "$T/real.json"
		ln -s "$T/outside/summary.json" "$R/summary.json"
		fb compare "$R" "$T/real.json" --allow-cached
		expect_rc 3
		expect_err "is a symbolic link"
		# The user's own path to a link is followed.
		fb compare "$R/summary.json" "$T/real.json" --allow-cached
		[ "$RC" -eq 0 ] || fail "compare of a user-given link exited $RC"
		;;
	esac
	;;
output_is_file)
	# --output naming an existing regular file is refused before anything is measured.
	config of
	cp "$T/victim" "$T/resfile"
	fb run "$T/of.ini" --output "$T/resfile"
	expect_rc 1
	expect_err "cannot write results into '$T/resfile': Not a directory (checked before the run"
	[ "$(cat "$T/resfile")" = precious ] || fail "the file was changed"
	;;
same_output)
	# Three runs with the same --output finishing together (plots keep each in its
	# temporary folder for a while) each get their own folder; none fails after measuring.
	command -v gnuplot >/dev/null || { echo "SKIP: no gnuplot"; exit 77; }
	PLOTS=true config so
	fb generate "$T/so.ini"
	expect_rc 0
	for i in 1 2 3; do
		timeout -k 5 60 "$FEEDBENCH" run "$T/so.ini" -q --output "$T/shared" \
			>"$T/out$i" 2>"$T/err$i" &
		pids[$i]=$!
	done
	for i in 1 2 3; do
		wait "${pids[$i]}"
		rc=$?
		[ "$rc" -eq 0 ] || { cp "$T/err$i" "$T/err"; fail "run $i exited $rc"; }
	done
	n=$(find "$T/shared" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)
	[ "$n" -eq 3 ] || fail "expected 3 run folders, found $n: $(ls -A "$T/shared")"
	[ -z "$(ls -A "$T/shared" | grep '^\.')" ] || fail "temporary folders left: $(ls -A "$T/shared")"
	;;
full_disk_plots)
	# A disk that fills while the pictures are drawn: exit 1 with the reason, no folder under
	# the final name, the measured summary.json kept under "<name>.unfinished".
	command -v gnuplot >/dev/null || { echo "SKIP: no gnuplot"; exit 77; }
	MNT=$T/mnt
	mkdir "$MNT"
	mount -t tmpfs -o size=48k tmpfs "$MNT" 2>/dev/null || { MNT=; echo "SKIP: cannot mount a tmpfs"; exit 77; }
	PLOTS=true config fd
	fb run "$T/fd.ini" --output "$MNT"
	expect_rc 1
	expect_err "cannot write results into '$MNT/fd-"
	expect_err ".unfinished' (summary.json)"
	entries=$(ls -A "$MNT")
	[ "$(echo "$entries" | wc -l)" -eq 1 ] && [[ $entries == fd-*.unfinished ]] ||
		fail "expected only the unfinished folder, found: $entries"
	python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['metric']['train_bytes_read'] > 0" \
		"$MNT/$entries/summary.json" || fail "the kept summary.json is not whole"
	# Out of inodes after summary.json (the tmpfs's root, the run's temporary folder and
	# summary.json): the message names the file of the folder that could not be written.
	umount "$MNT" && mount -t tmpfs -o size=1m,nr_inodes=3 tmpfs "$MNT" || fail "cannot remount"
	PLOTS=false config fi
	fb run "$T/fi.ini" --output "$MNT"
	expect_rc 1
	grep -Eq "cannot write results into '$MNT/fi-[^']*': [a-z_]+\.(csv|md|ini|json): No space left on device; what was measured is kept in '$MNT/fi-[^']*\.unfinished'" "$T/err" ||
		fail "the message does not name the file that could not be written: $(cat "$T/err")"
	;;
sigterm_ranks)
	# SIGTERM to every rank (as a batch system ends a job): all ranks stop, say so once,
	# exit 143; no run folder under a final name (the epochs finished before the signal may
	# be kept in <run>.unfinished, marked "interrupted": true).
	CTIME=200ms EPOCHS=40 config st
	fb generate "$T/st.ini"
	expect_rc 0
	fb_mpi_bg 2 run "$T/st.ini"
	P=$MPIPID
	sleep 2
	kill -TERM $(ps -o pid= --ppid "$P") 2>/dev/null
	wait "$P"
	RC=$?
	expect_rc 143
	[ "$(grep -c "feedbench: interrupted" "$T/err")" -eq 1 ] || fail "'interrupted' not said once"
	[ -z "$(find "$T/results" -name summary.json ! -path '*.unfinished/*' 2>/dev/null)" ] ||
		fail "results were written under a final name"
	for s in $(find "$T/results" -name summary.json 2>/dev/null); do
		grep -q '"interrupted": true' "$s" || fail "$s is not marked interrupted"
	done
	;;
sigint_writing)
	# SIGINT while the results are being written (gnuplot drawing): exit 130, no folder under
	# the final name, the measured summary.json kept under "<name>.unfinished".
	command -v gnuplot >/dev/null || { echo "SKIP: no gnuplot"; exit 77; }
	cat >"$T/slow-gnuplot" <<SH
#!/bin/sh
touch "$T/drawing"
sleep 1
exec gnuplot "\$@"
SH
	chmod +x "$T/slow-gnuplot"
	PLOTS=true config sw
	FEEDBENCH_GNUPLOT=$T/slow-gnuplot "$FEEDBENCH" run "$T/sw.ini" -q >"$T/out" 2>"$T/err" &
	P=$!
	for i in $(seq 1 300); do [ -e "$T/drawing" ] && break; sleep 0.1; done
	[ -e "$T/drawing" ] || fail "gnuplot was never started"
	kill -INT "$P"
	wait "$P"
	RC=$?
	expect_rc 130
	expect_err "feedbench: interrupted: cannot write results into"
	entries=$(ls -A "$T/results")
	[ "$(echo "$entries" | wc -l)" -eq 1 ] && [[ $entries == sw-*.unfinished ]] ||
		fail "expected only the unfinished folder, found: $entries"
	[ -s "$T/results/$entries/summary.json" ] || fail "no summary.json kept"
	;;
sigstop_resume)
	# A job stopped for longer than the watchdog and resumed (a suspended batch job) is not
	# ended as a hang; the pause is a warning in summary.json.
	CTIME=100ms EPOCHS=16 WATCHDOG=2s config ss
	fb generate "$T/ss.ini"
	expect_rc 0
	fb_mpi_bg 2 run "$T/ss.ini" -q
	P=$MPIPID
	sleep 1.5
	C=$(ps -o pid= --ppid "$P")
	[ -n "$C" ] || fail "no ranks found"
	kill -STOP $C
	sleep 5
	kill -CONT $C
	wait "$P"
	RC=$?
	expect_rc 0
	grep -q "job was stopped" "$T"/results/ss-*/summary.json || fail "the pause is not in summary.json"
	;;
mpmd_configs | mpmd_commands | mpmd_sets)
	# Ranks started with different configs, commands or --set values (an MPMD launch) stop
	# at start-up with exit 2 and one message naming both commands; nothing is measured.
	config ma
	config mb
	case $CASE in
	mpmd_configs) a=(run "$T/ma.ini") b=(run "$T/mb.ini") ;;
	mpmd_commands) a=(validate "$T/ma.ini") b=(list) ;;
	mpmd_sets) a=(run "$T/ma.ini" --set reader.batch_size=2) b=(run "$T/ma.ini" --set reader.batch_size=4) ;;
	esac
	timeout -k 5 60 "$MPIEXEC" --oversubscribe -n 1 "$FEEDBENCH" "${a[@]}" : -n 1 "$FEEDBENCH" "${b[@]}" \
		>"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "the launch hung (killed after 60 s)"
	expect_rc 2
	[ "$(grep -c "the ranks were started with different commands" "$T/err")" -eq 1 ] ||
		fail "the mismatch is not said once"
	expect_err "rank 1 runs 'feedbench ${b[*]}'"
	[ ! -e "$T/data" ] && [ ! -e "$T/results" ] || fail "something was generated or measured"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "PASS ($CASE)"
exit 0
