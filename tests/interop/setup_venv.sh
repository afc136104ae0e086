#!/bin/sh
# Creates (once) a Python virtual environment of the tests, BUILD/NAME, with PACKAGES:
#   FEEDBENCH_BUILD_DIR=BUILD tests/interop/setup_venv.sh NAME PACKAGE...
# (setup_venv_interop.sh and setup_venv_s3.sh call it with their lists.) Idempotent: a venv
# whose stamp lists the same packages is reused as it is; several ctest processes may start at
# once: one creates it, the others wait on a lock (flock) and then find it made.
# FEEDBENCH_VENV_REUSE=FOLDER: where FOLDER/NAME is such a venv (another build folder of the
# same checkout: `make test`'s sanitizer phase reuses build/'s), BUILD/NAME becomes a link to
# it instead of a second copy. Exit 0 when the venv is ready, 1 when it cannot be made
# (python3 -m venv or pip fails): the tests that need it then do not run and make test fails,
# rather than passing without them.
set -u

name=${1:-}
build=${FEEDBENCH_BUILD_DIR:-}
if [ -z "$name" ] || [ $# -lt 2 ] || [ -z "$build" ]; then
	echo "usage: FEEDBENCH_BUILD_DIR=BUILD $0 NAME PACKAGE..." >&2
	exit 1
fi
shift
pkgs=$*
venv=$build/$name
stamp=.feedbench-packages

ready() { # ready DIR: a venv of these packages
	[ -x "$1/bin/python" ] && [ "$(cat "$1/$stamp" 2>/dev/null)" = "$pkgs" ]
}

ready "$venv" && exit 0
mkdir -p "$build" || exit 1
if command -v flock >/dev/null 2>&1; then
	exec 9>"$build/$name.lock"
	flock 9
	ready "$venv" && exit 0
fi

rm -rf "$venv"
reuse=${FEEDBENCH_VENV_REUSE:+$FEEDBENCH_VENV_REUSE/$name}
if [ -n "$reuse" ] && [ "$(cd "$reuse" 2>/dev/null && pwd -P)" != "$(cd "$build" && pwd -P)/$name" ] &&
	ready "$reuse" && ln -s "$reuse" "$venv"; then
	echo "setup_venv: $name: reused: $venv -> $reuse"
	exit 0
fi
if ! python3 -m venv "$venv"; then
	echo "setup_venv: $name: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
	exit 1
fi
# shellcheck disable=SC2086
if ! "$venv/bin/python" -m pip install --quiet $pkgs; then
	echo "setup_venv: $name: pip cannot install $pkgs: the tests that need $venv cannot run" >&2
	rm -rf "$venv"
	exit 1
fi
printf '%s' "$pkgs" >"$venv/$stamp"
echo "setup_venv: ready: $venv"
