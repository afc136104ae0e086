#!/bin/bash
# The command line as a user meets it: usage errors exit 2 with one clear line; keys, list,
# --help and --version print what they promise.
#
# usage: cli.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u
CASE=$1
. "$(dirname "$0")/../lib.sh"
lib_init cli
mkdir "$T/work" # the working directory of every command: relative paths land here

fb() {
	(cd "$T/work" && "$FEEDBENCH" "$@") >"$T/out" 2>"$T/err"
	RC=$?
}

expect() { # expect RC FRAGMENT...
	local want=$1
	shift
	[ "$RC" -eq "$want" ] || fail "exit status $RC, want $want"
	for m in "$@"; do
		grep -qF -- "$m" "$T/err" "$T/out" || fail "does not say: $m"
	done
}

good_config() {
	cat >"$T/good.ini" <<INI
[dataset]
data_dir = $T/data
num_files_train = 2
num_samples_per_file = 4
record_length_bytes = 4KiB
[output]
dir = $T/results
INI
}

case $CASE in
no_arguments)
	fb
	expect 2 "usage: feedbench COMMAND"
	;;
unknown_command)
	fb rnu configs/quickstart.ini
	expect 2 "unknown command 'rnu' (did you mean 'run'?"
	fb valdate x.ini
	expect 2 "unknown command 'valdate' (did you mean 'validate'?"
	fb gen x.ini
	expect 2 "(did you mean 'generate'?"
	fb xyzzy
	expect 2 "unknown command 'xyzzy' (see feedbench --help)"
	grep -q "did you mean" "$T/err" && fail "a suggestion for a name close to no command"
	;;
subcommand_help)
	# Every command's --help (and -h, and `help CMD`) prints its usage on stdout and exits 0,
	# also after other arguments; nothing is touched.
	good_config
	for cmd in run generate validate sweep plot compare baseline history keys list version help; do
		for form in "$cmd --help" "$cmd -h" "help $cmd"; do
			# shellcheck disable=SC2086
			fb $form
			expect 0 "usage: feedbench $cmd"
			[ ! -s "$T/err" ] || fail "'$form' writes to stderr"
		done
	done
	fb run "$T/good.ini" --set reader.batch_size=2 --help
	expect 0 "usage: feedbench run CONFIG"
	[ ! -e "$T/data" ] && [ ! -e "$T/results" ] || fail "--help touched files"
	fb help nope
	expect 2 "help: unknown command 'nope'"
	;;
accelerator_once)
	# The accelerator choice (and the CUDA fallback reason) is said once, by rank 0, by run;
	# generate and validate compute nothing and stay silent about it.
	good_config
	mpi() { (cd "$T/work" && "$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" "$@") >"$T/out" 2>"$T/err"; RC=$?; }
	mpi generate "$T/good.ini" --set train.exclude_start_steps=0
	expect 0
	! grep -q "accelerator" "$T/err" "$T/out" || fail "generate talks about the accelerator"
	mpi validate "$T/good.ini" --set train.exclude_start_steps=0
	expect 0
	! grep -q "accelerator:" "$T/err" || fail "validate talks about the accelerator"
	mpi run "$T/good.ini" --set train.exclude_start_steps=0
	expect 0
	[ "$(grep -c '^feedbench: accelerator: ' "$T/err")" -eq 1 ] ||
		fail "run does not say the accelerator exactly once on stderr"
	# A sweep of two points says it once too.
	printf '[sweep]\nreader.batch_size = 1, 2\n' >>"$T/good.ini"
	mpi sweep "$T/good.ini" --set train.exclude_start_steps=0 --set output.plots=false \
		--output "$T/sweeps"
	expect 0
	[ "$(grep -c 'accelerator: ' "$T/err")" -eq 1 ] ||
		fail "a sweep of two points does not say the accelerator exactly once"
	;;
readme_mpiexec)
	# The README's mpiexec lines run on a two-core machine as written: at most 2 ranks unless
	# --oversubscribe is on the line, and the root variables are stated before them.
	readme=${FEEDBENCH_SOURCE_DIR:?}/README.md
	grep -nE '(^|[^-])mpiexec [^`]*-n [0-9]+' "$readme" >"$T/out"
	[ -s "$T/out" ] || fail "no mpiexec line found in the README"
	while IFS= read -r line; do
		n=$(sed -E 's/.*-n ([0-9]+).*/\1/' <<<"$line")
		if [ "$n" -gt 2 ] && ! grep -q -- "--oversubscribe" <<<"$line"; then
			fail "README line needs more than 2 cores: $line"
		fi
	done <"$T/out"
	first=$(grep -n 'mpiexec -n' "$readme" | head -1 | cut -d: -f1)
	vars=$(grep -n 'export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1' "$readme" | head -1 | cut -d: -f1)
	[ -n "$vars" ] && [ "$vars" -lt "$first" ] || fail "the root variables are not stated before the first mpiexec line"
	# And the first one runs as written (on a tiny config instead of the quickstart's 200 MiB).
	good_config
	cmdline=$(sed -n "${first}p" "$readme" | sed -E "s#build/feedbench#$FEEDBENCH#; s#configs/quickstart.ini#$T/good.ini --set train.exclude_start_steps=0 --quiet#")
	(cd "$T/work" && eval "$cmdline") >"$T/out" 2>"$T/err"
	RC=$?
	expect 0
	;;
missing_config)
	for cmd in run validate generate; do
		fb $cmd
		expect 2 "$cmd needs a CONFIG file"
	done
	;;
config_not_found)
	fb run "$T/nope.ini"
	expect 2 "cannot open config '$T/nope.ini'"
	[ -z "$(ls -A "$T/work")" ] || fail "files were created: $(ls -A "$T/work")"
	;;
unknown_option)
	good_config
	fb run "$T/good.ini" --frobnicate
	expect 2 "unknown or incomplete option '--frobnicate'"
	;;
extra_argument)
	good_config
	fb validate "$T/good.ini" "$T/other.ini"
	expect 2 "unexpected argument"
	;;
unknown_set_key)
	good_config
	for cmd in validate run; do
		fb $cmd "$T/good.ini" --set reader.read_thread=4
		expect 2 "--set reader.read_thread: unknown key (did you mean 'reader.read_threads'?)"
	done
	[ ! -e "$T/data" ] && [ ! -e "$T/results" ] || fail "files were touched"
	;;
set_bad_value)
	good_config
	fb validate "$T/good.ini" --set train.computation_time=NaN
	expect 2 "--set train.computation_time:"
	fb validate "$T/good.ini" --set reader.batch_size=0
	expect 2 "--set reader.batch_size: 0 is out of range"
	fb validate "$T/good.ini" --set batch_size
	expect 2 "expected section.key=value"
	;;
set_applies)
	# --set overrides the file, and both spellings work.
	good_config
	fb validate "$T/good.ini" --set reader.batch_size=3 --set=train.epochs=7
	expect 0
	grep -qx "batch_size = 3" "$T/out" || fail "--set reader.batch_size=3 not applied"
	grep -qx "epochs = 7" "$T/out" || fail "--set=train.epochs=7 not applied"
	grep -qx "num_files_train = 2" "$T/out" || fail "the file's value was lost"
	;;
validate_mpi)
	# Under mpiexec every rank parses; the error is printed once.
	printf '[reader]\nread_thread = 4\n' >"$T/bad.ini"
	(cd "$T/work" && "$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" validate "$T/bad.ini") \
		>"$T/out" 2>"$T/err"
	RC=$?
	expect 2 "bad.ini:2: unknown key 'read_thread' in [reader] (did you mean 'read_threads'?)"
	[ "$(grep -c 'error:' "$T/err")" -eq 1 ] || fail "the error is not printed exactly once"
	;;
keys)
	# Markdown, one section table per section, every key of the effective config in it.
	good_config
	fb validate "$T/good.ini"
	expect 0
	cp "$T/out" "$T/effective.ini"
	fb keys
	expect 0 "# feedbench configuration keys" "| key | type | default | range or choices | help |"
	n=0
	section=
	while IFS= read -r line; do
		case $line in
		\[*\]) section=${line#[}; section=${section%]} ;;
		*" = "*)
			key=${line%% = *}
			# MPI-IO hints and sweep lines are not table keys.
			[ "$section" = storage.mpiio ] && [ "$key" != collective ] && continue
			awk -v s="## [$section]" -v k="| \`$key\` |" '
				$0 == s { in_s = 1; next }
				/^## \[/ { in_s = 0 }
				in_s && index($0, k) == 1 { found = 1 }
				END { exit !found }' "$T/out" ||
				fail "keys lacks $section.$key"
			n=$((n + 1))
			;;
		esac
	done <"$T/effective.ini"
	[ "$n" -ge 40 ] || fail "only $n keys checked"
	;;
list)
	fb list
	expect 0 "formats:" "storage back-ends:" "accelerators:"
	for f in raw npy npz hdf5 tfrecord wds mds; do
		if [ -e "${FEEDBENCH_SOURCE_DIR:-.}/formats/$f.c" ]; then
			grep -qE "^  $f +built" "$T/out" || fail "list does not show format $f as built"
		fi
	done
	# Formats on optional libraries: built, or listed as not built with the reason.
	for f in jpeg png; do
		grep -qE "^  $f +(built|not built +\(.+ not found)" "$T/out" ||
			fail "list does not show format $f"
	done
	for s in posix mpiio null faulty; do
		grep -qE "^  $s +built" "$T/out" || fail "list does not show back-end $s"
	done
	grep -qE "^  cpu +built" "$T/out" || fail "list does not show the cpu accelerator"
	# One name column for every section: the status starts at the same column on every row
	# (a long name such as "checkpoint" once pushed its row out of line), no trailing blanks.
	awk '/^  [a-z]/ { c = index($0, " not built"); if (!c) c = index($0, " built")
		if (col && c != col) { print "row out of line: " $0; bad = 1 } col = c }
		/ $/ { print "trailing blank: " $0; bad = 1 } END { exit bad }' "$T/out" ||
		fail "the columns of feedbench list are not aligned"
	# Each section lists exactly the choices of its key in `feedbench keys`, in order (one
	# list per kind: tests/unit/test_plugins.c checks the enums and the parser against it).
	cp "$T/out" "$T/list"
	fb keys
	expect 0
	for pair in "workloads:type:" "formats:format:" "storage back-ends:backend:" \
		"accelerators:accelerator:auto, "; do
		head=${pair%%:*} rest=${pair#*:} key=${rest%%:*} lead=${rest#*:}
		shown=$(awk -v h="$head" 'index($0, h ":") == 1 || index($0, h " (") == 1 { on = 1; next }
			/^[a-z]/ { on = 0 } on && /^  [a-z]/ { printf "%s%s", n++ ? ", " : "", $1 }' \
			"$T/list")
		choices=$(grep -m1 "^| \`$key\` |" "$T/out" | awk -F' [|] ' '{ print $4 }')
		[ -n "$shown" ] || fail "feedbench list shows no $head"
		[ "$lead$shown" = "$choices" ] ||
			fail "feedbench list shows $head '$shown', feedbench keys $key '$choices'"
	done
	;;
effective_roundtrip)
	# The effective config that validate prints (and every run folder keeps as config.ini)
	# lists every key with its value; loaded again it must validate and print the same text.
	# Once, the evaluation keys at their defaults were refused as "set", and a [sweep] with
	# two rows printed its axes twice (a duplicate key on reload).
	n=0
	for c in quickstart.ini ci.ini sweeps/loader-small.ini sweeps/tiny-files-vs-shards-small.ini \
		workloads/dlrm.ini workloads/unet3d.ini workloads/train_with_checkpoints.ini \
		workloads/ior.ini workloads/mdtest.ini; do
		c=${FEEDBENCH_SOURCE_DIR:-.}/configs/$c
		fb validate "$c"
		[ "$RC" -eq 0 ] || fail "$c does not validate: $(cat "$T/err")"
		cp "$T/out" "$T/effective.ini"
		fb validate "$T/effective.ini"
		[ "$RC" -eq 0 ] || fail "the effective config of $c does not validate: $(cat "$T/err")"
		tail -n +2 "$T/effective.ini" >"$T/a"
		tail -n +2 "$T/out" >"$T/b"
		cmp -s "$T/a" "$T/b" || fail "the effective config of $c changes when loaded again"
		n=$((n + 1))
	done
	[ "$n" -eq 9 ] || fail "only $n configs checked"
	;;
help)
	for h in --help -h help; do
		fb $h
		expect 0 "usage: feedbench COMMAND" "validate CONFIG" "keys" "Exit status"
		[ ! -s "$T/err" ] || fail "$h writes to stderr"
	done
	;;
version)
	fb --version
	expect 0
	grep -qE '^feedbench [0-9]+\.[0-9]+\.[0-9]+' "$T/out" || fail "no version number"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "PASS ($CASE)"
