#!/bin/bash
# IOR against feedbench's `[workload] type = ior` on the same pattern: write then read-back
# (IOR -w -r -C -e), one shared file or file per process (-F), the same block, transfer and
# segment counts and rank count; prints both tools' bandwidths and the ratio feedbench / IOR.
#
#   IOR_SOURCE=/path/to/ior tests/perf/ior_vs_feedbench.sh [--ranks 2] [--block 16m]
#       [--xfer 1m] [--segments 4] [--fpp] [--dir FOLDER] [--feedbench PATH]
#
# IOR is not a Debian package. With IOR_SOURCE naming a checkout of
# https://github.com/hpc/ior (or IOR_BIN an ior binary) the script builds it once
# (./bootstrap && ./configure && make, into IOR_SOURCE) and runs it; without either it says it
# is skipped and exits 0. Not a ctest: timings do not belong in tests.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FEEDBENCH=${FEEDBENCH:-$SRC/build/feedbench}
MPIEXEC=${MPIEXEC:-mpiexec}
RANKS=2 BLOCK=16m XFER=1m SEGMENTS=4 FPP=false DIR=
while [ $# -gt 0 ]; do
	case $1 in
	--ranks) RANKS=$2; shift ;;
	--block) BLOCK=$2; shift ;;
	--xfer) XFER=$2; shift ;;
	--segments) SEGMENTS=$2; shift ;;
	--fpp) FPP=true ;;
	--dir) DIR=$2; shift ;;
	--feedbench) FEEDBENCH=$2; shift ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

IOR=${IOR_BIN:-}
if [ -z "$IOR" ]; then
	if [ -z "${IOR_SOURCE:-}" ]; then
		echo "skipped: IOR is not installed; set IOR_SOURCE to a checkout of hpc/ior (built here) or IOR_BIN to an ior binary"
		exit 0
	fi
	if [ ! -x "$IOR_SOURCE/src/ior" ]; then
		(cd "$IOR_SOURCE" && { [ -x configure ] || ./bootstrap; } && ./configure --quiet &&
			make -j"$(nproc)" --quiet) >&2
	fi
	IOR=$IOR_SOURCE/src/ior
fi
[ -x "$FEEDBENCH" ] || { echo "no feedbench at $FEEDBENCH (build first)" >&2; exit 2; }

T=${DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fb_ior_vs_XXXXXX")}
mkdir -p "$T/ior" "$T/fb"
[ -n "$DIR" ] || trap 'rm -rf "$T"' EXIT
to_bytes() { numfmt --from=iec "$(tr 'a-z' 'A-Z' <<<"$1")"; }

ior_args=(-a POSIX -w -r -C -e -b "$BLOCK" -t "$XFER" -s "$SEGMENTS" -o "$T/ior/testfile")
[ "$FPP" = true ] && ior_args+=(-F)
"$MPIEXEC" --oversubscribe -n "$RANKS" "$IOR" "${ior_args[@]}" >"$T/ior.out"
# IOR's summary lines: "write  <max> <min> <mean> ..." (MiB/s); the mean column
ior_w=$(awk '$1 == "write" && NF > 8 && $2 ~ /^[0-9.]+$/ {print $4; exit}' "$T/ior.out")
ior_r=$(awk '$1 == "read" && NF > 8 && $2 ~ /^[0-9.]+$/ {print $4; exit}' "$T/ior.out")

"$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" run "$SRC/configs/workloads/ior.ini" \
	--set "dataset.data_dir=$T/fb" --set "output.dir=$T/results" \
	--set "ior.block_size=$(to_bytes "$BLOCK")" --set "ior.transfer_size=$(to_bytes "$XFER")" \
	--set "ior.segments=$SEGMENTS" --set "ior.file_per_process=$FPP" --quiet >/dev/null
read -r fb_w fb_r < <(python3 - "$T"/results/*/summary.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metric"]
print(m["ior_write_bandwidth_MiB_per_second"], m["ior_read_bandwidth_MiB_per_second"])
PY
)
printf '%-6s %14s %14s %8s\n' phase "IOR MiB/s" "feedbench" ratio
for p in write read; do
	i=$([ $p = write ] && echo "$ior_w" || echo "$ior_r")
	f=$([ $p = write ] && echo "$fb_w" || echo "$fb_r")
	printf '%-6s %14.1f %14.1f %8.3f\n' $p "$i" "$f" "$(python3 -c "print($f / $i)")"
done
echo "($RANKS ranks, block $BLOCK, xfer $XFER, $SEGMENTS segments, file per process $FPP, in $T)"
