#!/bin/sh
# Runs one interop test file in the venv made by setup_venv_interop.sh:
#   run_pytest.sh BUILD_DIR TEST_FILE
# Exit 1 when there is no venv (interop.venv failed to make it).
venv=$1/venv
if [ ! -x "$venv/bin/python" ]; then
	echo "interop: no Python venv in $venv (interop.venv could not make it)"
	exit 1
fi
mkdir -p "$1/tmp/interop" || exit 1
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -o console_output_style=classic \
	--basetemp="$1/tmp/interop/$(basename "$2" .py)" "$2"
