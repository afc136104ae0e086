#!/bin/bash
# Runs one libFuzzer target of the `fuzz` build from its seed corpus.
#   run_fuzz.sh NAME SECONDS smoke   ctest: one process from the seeds alone, fixed random seed,
#                                    so a run repeats the same inputs in the same order
#   run_fuzz.sh NAME SECONDS JOBS    make fuzz: JOBS processes of SECONDS each; new coverage is
#                                    kept in $FEEDBENCH_BUILD_DIR/fuzz/NAME/corpus for next time
# Seeds stay untouched in tests/fuzz/corpus/NAME. A crash, leak, timeout or sanitizer report
# exits non-zero and leaves the input in $FEEDBENCH_BUILD_DIR/fuzz/NAME/ (crash-*, leak-*,
# timeout-*, oom-*), named in the last lines.
set -u
name=$1 seconds=$2 mode=${3:-smoke}
build=${FEEDBENCH_BUILD_DIR:?FEEDBENCH_BUILD_DIR names the fuzz build folder}
src=${FEEDBENCH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=$build/fuzz/fuzz_$name seeds=$src/tests/fuzz/corpus/$name
work=$build/fuzz/$name
opts=$src/tests/fuzz/$name.options
corpus=$work/corpus jobs=1
if [ "$mode" = smoke ]; then
	corpus=$work/smoke-corpus
	rm -rf "$corpus"
else
	jobs=$mode
fi

[ -x "$bin" ] || { echo "run_fuzz.sh: $bin is not built (cmake --preset fuzz)" >&2; exit 1; }
mkdir -p "$corpus"
cd "$work" || exit 1
rm -f fuzz-*.log
flags=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536
	-close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$work/")
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# use_tls=0: LeakSanitizer 14 crashes walking the dynamic TLS of dlopen()ed Open MPI plug-ins
# with glibc 2.36 ("Tracer caught signal 11"); feedbench keeps no heap pointers in TLS.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0:use_tls=0}
# Per-target settings in tests/fuzz/NAME.options, one a line: libFuzzer flags (-dict=@DIR@/x),
# or ASAN_OPTIONS=... / LSAN_OPTIONS=... / UBSAN_OPTIONS=... added to those variables.
if [ -f "$opts" ]; then
	while read -r line; do
		line=${line//@DIR@/$src/tests/fuzz}
		case $line in
		'#'* | '') ;;
		-*) flags+=("$line") ;;
		[AUL]*_OPTIONS=*) var=${line%%=*} && export "$var=${!var}:${line#*=}" ;;
		esac
	done <"$opts"
fi
before=$(ls -1 "$work" | grep -E '^(crash|leak|timeout|oom)-' | sort)
start=$(date +%s)
if [ "$jobs" -gt 1 ]; then
	"$bin" "${flags[@]}" -jobs="$jobs" -workers="$jobs" "$corpus" "$seeds"
	rc=$?
	# -jobs exits 0 when a job crashed: the logs tell.
	grep -l -E '^==[0-9]+==ERROR|^SUMMARY: |deadly signal' fuzz-*.log >/dev/null 2>&1 && rc=1
	for log in fuzz-*.log; do grep -E '^(==[0-9]+==ERROR|SUMMARY|Done |stat::number_of_executed_units)' "$log"; done
else
	[ "$mode" = smoke ] && flags+=(-seed=1)
	"$bin" "${flags[@]}" "$corpus" "$seeds" 2>&1 | tail -n 60
	rc=${PIPESTATUS[0]}
fi
after=$(ls -1 "$work" | grep -E '^(crash|leak|timeout|oom)-' | sort)
found=$(comm -13 <(echo "$before") <(echo "$after") | grep -v '^$')
echo "fuzz.$name: $(($(date +%s) - start)) s, $jobs job(s) of $seconds s, corpus $(ls -1 "$corpus" | wc -l) + $(ls -1 "$seeds" | wc -l) seeds"
if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
	for f in $found; do
		echo "fuzz.$name: FAILED: input saved as $work/$f"
		echo "  rerun: ASAN_OPTIONS=$ASAN_OPTIONS LSAN_OPTIONS=$LSAN_OPTIONS $bin $work/$f"
	done
	[ -n "$found" ] || echo "fuzz.$name: FAILED (exit $rc); see the output above"
	exit 1
fi
