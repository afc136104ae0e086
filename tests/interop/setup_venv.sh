#!/bin/sh
# Creates (once) the Python virtual environment the interop tests run in:
#   tests/interop/setup_venv.sh BUILD_DIR
# Idempotent: a venv whose stamp lists the same packages is reused as it is. Exit 0 when the
# venv is ready, 1 when it cannot be made (python3 -m venv or pip fails): the interop tests then
# do not run and make test fails, rather than passing without them.
set -u

build=${1:-${FEEDBENCH_BUILD_DIR:-}}
if [ -z "$build" ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 1
fi
venv=$build/venv
pkgs="numpy h5py webdataset tfrecord crc32c protobuf pytest lxml pyarrow Pillow zarr"
stamp=$venv/.feedbench-packages

if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkgs" ]; then
	exit 0
fi

# Several ctest processes may start at once: one creates, the others wait for it.
mkdir -p "$build" || exit 1
lock=$build/venv.lock
if command -v flock >/dev/null 2>&1; then
	exec 9>"$lock"
	flock 9
	if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkgs" ]; then
		exit 0
	fi
fi

rm -rf "$venv"
if ! python3 -m venv "$venv"; then
	echo "setup_venv: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
	exit 1
fi
# shellcheck disable=SC2086
if ! "$venv/bin/python" -m pip install --quiet $pkgs; then
	echo "setup_venv: pip cannot install $pkgs: the interop tests cannot run" >&2
	rm -rf "$venv"
	exit 1
fi
printf '%s' "$pkgs" >"$stamp"
echo "setup_venv: ready: $venv"
