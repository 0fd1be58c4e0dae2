# Helpers for the cluster tests: kvactor-serve processes (a single node,
# workers, fronts) on loopback, and the raw line protocol over bash's
# /dev/tcp. Source it after setting $serve; every process started here is
# killed on exit.
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
logs=$(mktemp -d)
declare -A pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$logs"
}
trap cleanup EXIT

# start NAME ARGS...: kvactor-serve ARGS in the background, its output in $logs/NAME.
start() {
  local name=$1; shift
  "$serve" "$@" >"$logs/$name" 2>&1 &
  pids[$name]=$!
}

# start_http NAME ARGS...: start with an unused HTTP port (0 turns the
# HTTP front off), tried a few times; sets http_port.
start_http() {
  local name=$1; shift
  for _ in 1 2 3 4 5; do
    http_port=$(unused_port)
    start "$name" "$@" --http-port="$http_port"
    for _ in $(seq 1 300); do
      grep -q 'kvactor HTTP on' "$logs/$name" && return 0
      kill -0 "${pids[$name]}" 2>/dev/null || break
      sleep 0.1
    done
  done
  { echo "$name did not start its HTTP front:"; cat "$logs/$name"; } >&2; return 1
}

# wait_for NAME REGEX: until the process's output has a matching line (30 s).
wait_for() {
  for _ in $(seq 1 300); do
    grep -qE "$2" "$logs/$1" && return 0
    sleep 0.1
  done
  { echo "$1 never printed /$2/:"; cat "$logs/$1"; } >&2; return 1
}

# The port a single node or front listens on, and the port a worker published on.
listen_port() { wait_for "$1" 'kvactor listening on' && sed -n 's/.*kvactor listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$logs/$1"; }
worker_port() { wait_for "$1" 'kvactor worker on' && sed -n 's/.*kvactor worker on 127.0.0.1:\([0-9]*\).*/\1/p' "$logs/$1"; }

# stop NAME: SIGINT, then wait for a clean exit (status 0).
stop() { kill -INT "${pids[$1]}"; wait "${pids[$1]}"; unset "pids[$1]"; }

# stats PORT: one stats line.
stats() {
  local fd line
  exec {fd}<>"/dev/tcp/127.0.0.1/$1"
  printf '%s\n' '{"op":"stats"}' >&$fd
  read -r -t 30 line <&$fd
  exec {fd}>&-
  echo "$line"
}

# field_values LINE KEY: every value of "KEY":N in the line, one per line (the workers' in order).
field_values() { grep -o "\"$2\":[0-9]*" <<<"$1" | cut -d: -f2; }

# wait_live PORT N: until the front at PORT has N live workers (30 s).
wait_live() {
  local s
  for _ in $(seq 1 300); do
    s=$(stats "$1")
    [ "$(grep -o '"state":"live"' <<<"$s" | wc -l)" -eq "$2" ] && return 0
    sleep 0.1
  done
  echo "the front never had $2 live workers: $s" >&2; return 1
}

# wait_idle PORT: until nothing runs or waits behind the server at PORT (30 s); prints its stats.
wait_idle() {
  local s
  for _ in $(seq 1 300); do
    s=$(stats "$1")
    [ "$(field_values "$s" running | head -1)" -eq 0 ] && [ "$(field_values "$s" waiting | head -1)" -eq 0 ] && break
    sleep 0.1
  done
  echo "$s"
}

# batch PORT FILE: sends FILE's request lines on one connection and prints
# each request's last line (done or error), sorted by id (60 s at most).
batch() {
  local fd line n want
  want=$(grep -c . "$2")
  exec {fd}<>"/dev/tcp/127.0.0.1/$1"
  cat "$2" >&$fd
  n=0
  while [ "$n" -lt "$want" ] && read -r -t 60 line <&$fd; do
    case $line in
      *'"event":"done"'*|*'"event":"error"'*) echo "$line"; n=$((n + 1)) ;;
    esac
  done | sort
  exec {fd}>&-
}

# outputs: the id, finish reason and tokens of each done line on stdin.
outputs() { sed -n 's/.*"id":"\([^"]*\)","finish_reason":"\([^"]*\)","tokens":\(\[[^]]*\]\).*/\1 \2 \3/p'; }
