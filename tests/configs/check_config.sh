#!/bin/bash
# Runs feedbench on one bad (or good) config and checks what the user sees (docs/failures.md 1-8, 24):
# the exit status, the message (once, naming file:line), and that nothing was touched: no data
# folder, no results folder.
#
# The config file says what to expect in its leading comments:
#   ; expect: 2                      exit status (required)
#   ; message: TEXT                  a fragment of stderr (any number of lines; all must appear)
#   ; ranks: 2                       run under mpiexec with this many ranks (default: 1, direct)
#   ; commands: validate run         which commands to try (default: validate run)
#
# usage: check_config.sh FILE.ini
#        check_config.sh --generated CASE   (files that cannot live in git: NUL bytes, CRLF, empty)
set -u
: "${FEEDBENCH_SOURCE_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$(dirname "$0")/../lib.sh"
lib_init config
mkdir "$T/work"

if [ "$1" = "--generated" ]; then
	# Files with bytes git would mangle; the expectations live here instead.
	NAME=$2
	FAIL_WHAT=$NAME
	FILE="$T/$NAME.ini"
	case $NAME in
	nul_byte)
		printf '[reader]\nbatch_size = 4\nread_threads = 2\0junk\n' >"$FILE"
		EXPECT=2 MESSAGES=("nul_byte.ini:3: NUL byte in the config file")
		;;
	empty)
		: >"$FILE"
		EXPECT=2 MESSAGES=("empty.ini: the config file is empty")
		;;
	crlf)
		# CRLF files are accepted: same effective config as the LF file.
		printf '[workload]\r\nname = crlf\r\n[dataset]\r\nrecord_length_bytes = 4KiB\r\n[train]\r\ncomputation_time = 2ms\r\n' >"$FILE"
		EXPECT=0 MESSAGES=()
		;;
	crlf_error_line)
		# Line numbers stay right in CRLF files.
		printf '[reader]\r\nbatch_size = 4\r\n\r\nread_thread = 2\r\n' >"$FILE"
		EXPECT=2 MESSAGES=("crlf_error_line.ini:4: unknown key 'read_thread' in [reader] (did you mean 'read_threads'?)")
		;;
	missing_file)
		FILE="$T/does-not-exist.ini"
		EXPECT=2 MESSAGES=("cannot open config '$FILE'")
		;;
	*)
		echo "unknown generated case $NAME" >&2
		exit 2
		;;
	esac
	RANKS=1
	COMMANDS="validate run"
else
	FILE=$1
	NAME=$(basename "$FILE" .ini)
	FAIL_WHAT=$NAME
	EXPECT=$(sed -n 's/^; expect: *//p' "$FILE" | head -1)
	mapfile -t MESSAGES < <(sed -n 's/^; message: *//p' "$FILE")
	RANKS=$(sed -n 's/^; ranks: *//p' "$FILE" | head -1)
	COMMANDS=$(sed -n 's/^; commands: *//p' "$FILE" | head -1)
	: "${RANKS:=1}" "${COMMANDS:=validate run}"
	[ -n "$EXPECT" ] || fail "no '; expect:' line in $FILE"
	cp "$FILE" "$T/$NAME.ini"
	FILE="$T/$NAME.ini"
fi

for cmd in $COMMANDS; do
	# Relative paths (data/feedbench, results) land in an empty folder we can inspect.
	if [ "$RANKS" -gt 1 ]; then
		(cd "$T/work" && "$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" "$cmd" "$FILE") \
			>"$T/out" 2>"$T/err"
	else
		(cd "$T/work" && "$FEEDBENCH" "$cmd" "$FILE") >"$T/out" 2>"$T/err"
	fi
	rc=$?
	[ "$rc" -eq "$EXPECT" ] || fail "feedbench $cmd exited $rc, want $EXPECT"
	for m in "${MESSAGES[@]}"; do
		grep -qF -- "$m" "$T/err" || fail "feedbench $cmd does not say: $m"
	done
	if [ "$EXPECT" -ne 0 ]; then
		# One message, printed once by rank 0, saying "error:" once.
		n=$(grep -c "error:" "$T/err")
		[ "$n" -eq 1 ] || fail "feedbench $cmd printed $n error lines, want 1"
		grep -q "error: .*error:" "$T/err" && fail "the message repeats 'error:'"
		# Refused before any file is touched.
		leftover=$(ls -A "$T/work")
		[ -z "$leftover" ] || fail "feedbench $cmd touched files: $leftover"
	elif [ "$cmd" = validate ]; then
		grep -q '^\[reader\]' "$T/out" || fail "validate did not print the effective config"
	fi
done
echo "PASS ($NAME): $COMMANDS"
exit 0
