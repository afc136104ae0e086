#!/bin/sh
# The virtual environment of the S3 tests (tests/s3/): moto's S3 server and boto3.
#   tests/interop/setup_venv_s3.sh BUILD_DIR
# Its own venv so that the interop venv's packages (and their stamp) stay as they are. moto's
# S3 part plus Flask is all its server needs for S3 and the IAM calls of s3.auth; moto[server]
# would add the CloudFormation, Docker and X-Ray clients (127 s and 317 MiB to make, against
# about 20 s and 140 MiB). Made once per build folder. Idempotent: a venv whose stamp lists the same
# packages is reused. Exit 0 when ready, 1 when it cannot be made (the S3 tests then do not
# run and make test fails, rather than passing without them).
set -u
build=${1:?usage: $0 BUILD_DIR}
venv=$build/venv-s3
pkgs="moto[s3]==5.2.5 flask==3.1.3 flask-cors==6.0.5 boto3==1.44.8"
stamp=$venv/.feedbench-packages
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkgs" ]; then
	exit 0
fi
mkdir -p "$build" || exit 1
exec 9>"$build/venv-s3.lock"
command -v flock >/dev/null 2>&1 && flock 9
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkgs" ]; then
	exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv" || {
	echo "setup_venv_s3: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
	exit 1
}
# shellcheck disable=SC2086
if ! "$venv/bin/python" -m pip install --quiet $pkgs; then
	echo "setup_venv_s3: pip cannot install $pkgs: the S3 tests cannot run" >&2
	rm -rf "$venv"
	exit 1
fi
printf '%s' "$pkgs" >"$stamp"
echo "setup_venv_s3: ready: $venv"
