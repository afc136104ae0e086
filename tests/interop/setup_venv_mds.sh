#!/bin/sh
# The virtual environment of the mds interop test, with MosaicML Streaming:
#   tests/interop/setup_venv_mds.sh BUILD_DIR
# Streaming needs torch and torchvision: Debian's python3-torch and python3-torchvision (the
# Makefile's DLIO_PACKAGES, `make dlio-deps`) seen through --system-site-packages keep the
# install small; pip adds mosaicml-streaming without its cloud SDKs (--no-deps) and the few
# packages `import streaming` needs. Exit 0 when ready, 77 when torch is missing or pip cannot
# install (the test is then skipped, not failed), 1 on any other error.
set -u
build=${1:?usage: $0 BUILD_DIR}
venv=$build/venv-mds
pkgs="mosaicml-streaming==0.13.0 xxhash<4 zstd python-snappy Brotli tqdm catalogue transformers<5 pytest crc32c"
stamp=$venv/.feedbench-packages
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkgs" ]; then
	exit 0
fi
if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
	echo "setup_venv_mds: Debian python3-torch and python3-torchvision are not installed (make dlio-deps); the mds interop test is skipped" >&2
	exit 77
fi
mkdir -p "$build" || exit 1
exec 9>"$build/venv-mds.lock"
command -v flock >/dev/null 2>&1 && flock 9
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv" || exit 77
set -- $pkgs
"$venv/bin/python" -m pip install --quiet --no-deps "$1" || { rm -rf "$venv"; exit 77; }
shift
"$venv/bin/python" -m pip install --quiet "$@" || { rm -rf "$venv"; exit 77; }
"$venv/bin/python" -c "from streaming import MDSWriter, StreamingDataset" || { rm -rf "$venv"; exit 77; }
printf '%s' "$pkgs" >"$stamp"
echo "setup_venv_mds: ready: $venv"
