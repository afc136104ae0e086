#!/bin/bash
# moto's S3 server on 127.0.0.1 for the S3 tests (a ctest fixture, tests/s3/tests.cmake):
#   tests/s3/moto.sh start BUILD_DIR [NAME] [ENV=VALUE...]   port in BUILD_DIR/s3-NAME/port
#   tests/s3/moto.sh stop BUILD_DIR [NAME]
# NAME (default moto) keeps servers apart; ENV=VALUE pairs go to the server's environment
# (INITIAL_NO_AUTH_ACTION_COUNT=0: moto checks every signature). start waits until the server
# answers (at most 30 s) and fails with its log otherwise; stop kills it and removes the folder.
set -u
cmd=${1:?usage: $0 start|stop BUILD_DIR [NAME]}
build=${2:?usage: $0 start|stop BUILD_DIR [NAME]}
name=${3:-moto}
shift 3 2>/dev/null || shift $#
dir=$build/s3-$name
venv=${S3_VENV:-$build/venv-s3} # S3_VENV: the venv when BUILD_DIR is another folder
py=$venv/bin/python

stop() {
	if [ -f "$dir/pid" ]; then
		kill "$(cat "$dir/pid")" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$(cat "$dir/pid")" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$(cat "$dir/pid")" 2>/dev/null
	fi
	rm -rf "$dir"
}

case $cmd in
start)
	stop
	mkdir -p "$dir" || exit 1
	port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') || exit 1
	env "$@" setsid "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$dir/log" 2>&1 </dev/null &
	echo $! >"$dir/pid"
	echo "$port" >"$dir/port"
	if ! "$py" - "$port" <<'PY'; then
import sys, time, urllib.request, urllib.error
url = "http://127.0.0.1:%s/" % sys.argv[1]
for _ in range(300):
    try:
        urllib.request.urlopen(url, timeout=1)
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)  # it answers (403 with auth on)
    except Exception:
        time.sleep(0.1)
sys.exit(1)
PY
		echo "moto did not start on 127.0.0.1:$port:" >&2
		cat "$dir/log" >&2
		stop
		exit 1
	fi
	echo "moto ($name) on 127.0.0.1:$port"
	;;
stop) stop ;;
*) echo "usage: $0 start|stop BUILD_DIR [NAME]" >&2; exit 2 ;;
esac
