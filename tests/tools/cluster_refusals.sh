#!/usr/bin/env bash
# What a front and a worker refuse, each with a message naming the fault: a
# bad --workers list, a worker beyond loopback without TLS, a worker of
# another protocol version, and no live worker at all (overloaded at once).
#   cluster_refusals.sh SERVE MODEL_DIR
set -euo pipefail
serve=$1 model=$2
. "$(dirname "$0")/cluster_lib.sh"

expect_exit() { # CODE PATTERN ARGS...: the exit code and a line of stderr
  local code=$1 pattern=$2 rc=0; shift 2
  "$serve" --model="$model" "$@" >"$logs/out" 2>&1 || rc=$?
  cat "$logs/out"
  [ "$rc" -eq "$code" ] && grep -q -- "$pattern" "$logs/out"
}
expect_exit 2 "'127.0.0.1' has no port" --workers=127.0.0.1
expect_exit 2 "bad port '99999'" --workers=127.0.0.1:7901,127.0.0.1:99999
expect_exit 2 "exclude each other" --workers=127.0.0.1:7901 --worker-port=0
expect_exit 2 "beyond loopback only with TLS" --worker-port=0 --worker-bind=0.0.0.0

# A worker that claims another version, and a port with no worker at all.
start odd --model="$model" --kv-cache-mib=16 --threads=1 --worker-port=0 --worker-protocol-version=99
odd=$(worker_port odd)
start front --model="$model" --port=0 --workers="127.0.0.1:$odd,127.0.0.1:1"
front=$(listen_port front)
wait_for front "127.0.0.1:$odd refused: it speaks cluster protocol version 99, this front speaks version [0-9]+$"
wait_for front "127.0.0.1:1 down: cannot connect"
s=$(stats "$front")
echo "$s"
grep -q "\"address\":\"127.0.0.1:$odd\",\"state\":\"refused\"" <<<"$s"
echo '{"op":"generate","id":"r1","prompt":"anyone?","max_tokens":3}' >"$logs/req"
reply=$(batch "$front" "$logs/req")
echo "$reply"
grep -q '"code":"overloaded"' <<<"$reply"

stop front
stop odd
