# Sourced by the tests that need kvactor-serve's HTTP front:
#   start_http_server SERVE MODEL_DIR [more kvactor-serve options]
# starts it in the background and sets pid, http_port and log (removed, and
# the server killed, at exit);
#   http METHOD PATH [BODY]
# sends one request on a connection of its own and prints the whole response.
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
log=$(mktemp)
# NOTE: no pid yet must kill nothing (kill -9 0 would end the whole group).
trap '[ -z "${pid:-}" ] || kill -9 "$pid" 2>/dev/null || true; rm -f "$log"' EXIT

start_http_server() {
  local serve=$1 model=$2
  shift 2
  # An HTTP port is given, not drawn by the kernel (0 turns the front
  # off): try a few.
  for _ in 1 2 3 4 5; do
    http_port=$(unused_port)
    "$serve" --model="$model" --port=0 --http-port="$http_port" "$@" >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 1 300); do
      grep -q 'kvactor HTTP on' "$log" && break
      kill -0 $pid 2>/dev/null || break
      sleep 0.1
    done
    grep -q 'kvactor HTTP on' "$log" && break
  done
  grep -q 'kvactor HTTP on' "$log" || { echo "the server did not start:"; cat "$log"; exit 1; }
  cat "$log"
}

http() { # METHOD PATH [BODY]
  local body=${3:-}
  exec 3<>"/dev/tcp/127.0.0.1/$http_port"
  printf '%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' \
    "$1" "$2" "${#body}" "$body" >&3
  timeout 60 cat <&3
  exec 3>&-
}
