#!/usr/bin/env bash
# A worker killed mid-stream: exactly its requests end with worker_lost, the
# other worker's finish, the front keeps serving; the worker restarted on
# its port rejoins and gets requests again. A second front on the same
# workers killed mid-stream: its requests are cancelled on the workers.
#   cluster_failure.sh SERVE MODEL_DIR
set -euo pipefail
serve=$1 model=$2
. "$(dirname "$0")/cluster_lib.sh"
# Steps finish up to 20 ms late, so that 200 tokens stream for a while.
common=(--model="$model" --kv-cache-mib=16 --threads=1 --scheduler.max-threads=2 --fault-jitter-ms=20)

start w1 "${common[@]}" --worker-port=0
start w2 "${common[@]}" --worker-port=0
p1=$(worker_port w1) p2=$(worker_port w2)
start front --model="$model" --port=0 --workers="127.0.0.1:$p1,127.0.0.1:$p2"
front=$(listen_port front)
wait_live "$front" 2

n=6
exec {c}<>"/dev/tcp/127.0.0.1/$front"
for i in $(seq 1 $n); do
  echo "{\"op\":\"generate\",\"id\":\"r$i\",\"prompt\":\"long story $i\",\"max_tokens\":200,\"ignore_eos\":true}"
done >&$c
# Every request streams before the kill.
declare -A streaming=()
while [ "${#streaming[@]}" -lt $n ] && read -r -t 30 line <&$c; do
  [[ $line == *'"event":"token"'* ]] && streaming[$(sed 's/.*"id":"\([^"]*\)".*/\1/' <<<"$line")]=1
done
[ "${#streaming[@]}" -eq $n ]
s=$(stats "$front")
echo "$s"
mapfile -t live < <(field_values "$s" requests_live)
[ $((live[0] + live[1])) -eq $n ]
[ "${live[0]}" -gt 0 ] && [ "${live[1]}" -gt 0 ]

kill -9 "${pids[w1]}"
wait "${pids[w1]}" || true
unset "pids[w1]"
lost=0 done=0 other=0
while [ $((lost + done + other)) -lt $n ] && read -r -t 60 line <&$c; do
  case $line in
    *'"event":"error"'*'"code":"worker_lost"'*) echo "$line"; lost=$((lost + 1)) ;;
    *'"event":"done"'*'"finish_reason":"max_tokens"'*) done=$((done + 1)) ;;
    *'"event":"done"'*|*'"event":"error"'*) echo "unexpected: $line"; other=$((other + 1)) ;;
  esac
done
exec {c}>&-
echo "worker_lost $lost, finished $done, other $other"
[ "$lost" -eq "${live[0]}" ] && [ "$done" -eq "${live[1]}" ] && [ "$other" -eq 0 ]

# The front serves on the other worker, and lists the lost one as down.
s=$(stats "$front")
echo "$s"
grep -q "\"address\":\"127.0.0.1:$p1\",\"state\":\"down\"" <<<"$s"
echo '{"op":"generate","id":"after","prompt":"still there","max_tokens":3}' >"$logs/req"
batch "$front" "$logs/req" | grep -q '"finish_reason":"max_tokens"'

# Restarted on its port, the worker rejoins and gets requests.
mapfile -t before < <(field_values "$s" requests_routed)
start w1 "${common[@]}" --worker-port="$p1"
worker_port w1 >/dev/null
wait_live "$front" 2
for i in $(seq 1 6); do
  echo "{\"op\":\"generate\",\"id\":\"b$i\",\"prompt\":\"back $i\",\"max_tokens\":3}"
done >"$logs/req"
[ "$(batch "$front" "$logs/req" | grep -c '"finish_reason":"max_tokens"')" -eq 6 ]
mapfile -t after < <(field_values "$(stats "$front")" requests_routed)
echo "routed to the restarted worker: $((after[0] - before[0]))"
[ $((after[0] - before[0])) -gt 0 ]

# A frozen worker (SIGSTOP: no connection is closed) stops answering the
# heartbeats: its requests end with worker_lost as well; thawed, it rejoins.
exec {c}<>"/dev/tcp/127.0.0.1/$front"
for i in 1 2 3 4; do
  echo "{\"op\":\"generate\",\"id\":\"s$i\",\"prompt\":\"frozen $i\",\"max_tokens\":200,\"ignore_eos\":true}"
done >&$c
declare -A streaming=()
while [ "${#streaming[@]}" -lt 4 ] && read -r -t 30 line <&$c; do
  [[ $line == *'"event":"token"'* ]] && streaming[$(sed 's/.*"id":"\([^"]*\)".*/\1/' <<<"$line")]=1
done
mapfile -t live < <(field_values "$(stats "$front")" requests_live)
[ "${live[1]}" -gt 0 ]
kill -STOP "${pids[w2]}"
lost=0 done=0 other=0
while [ $((lost + done + other)) -lt 4 ] && read -r -t 60 line <&$c; do
  case $line in
    *'"event":"error"'*'"code":"worker_lost"'*) echo "$line"; lost=$((lost + 1)) ;;
    *'"event":"done"'*'"finish_reason":"max_tokens"'*) done=$((done + 1)) ;;
    *'"event":"done"'*|*'"event":"error"'*) echo "unexpected: $line"; other=$((other + 1)) ;;
  esac
done
exec {c}>&-
echo "frozen: worker_lost $lost, finished $done, other $other (live before: ${live[*]})"
kill -CONT "${pids[w2]}"
[ "$lost" -eq "${live[1]}" ] && [ "$done" -eq "${live[0]}" ] && [ "$other" -eq 0 ]
wait_live "$front" 2
# The thawed worker's requests are cancelled: their relays are gone.
aborted=$(field_values "$(wait_idle "$front")" requests_aborted | head -1)

# A second front over the same workers, killed mid-stream: the workers
# cancel its requests (they monitor its relays) and go idle, and the first
# front's view is unchanged.
start front2 --model="$model" --port=0 --workers="127.0.0.1:$p1,127.0.0.1:$p2"
front2=$(listen_port front2)
wait_live "$front2" 2
exec {c}<>"/dev/tcp/127.0.0.1/$front2"
for i in 1 2 3 4; do
  echo "{\"op\":\"generate\",\"id\":\"f$i\",\"prompt\":\"second front $i\",\"max_tokens\":400,\"ignore_eos\":true}"
done >&$c
n_tokens=0
while [ "$n_tokens" -lt 8 ] && read -r -t 30 line <&$c; do
  [[ $line == *'"event":"token"'* ]] && n_tokens=$((n_tokens + 1))
done
s=$(stats "$front")
echo "$s"
[ "$(field_values "$s" running | head -1)" -gt 0 ] # the second front's requests run
kill -9 "${pids[front2]}"
wait "${pids[front2]}" || true
unset "pids[front2]"
exec {c}>&-
s=$(wait_idle "$front")
echo "$s"
[ "$(field_values "$s" running | head -1)" -eq 0 ]
[ "$(field_values "$s" device_blocks_in_use | head -1)" -eq 0 ]
[ "$(field_values "$s" requests_aborted | head -1)" -eq $((aborted + 4)) ] # the second front's, cancelled
[ "$(grep -o '"state":"live"' <<<"$s" | wc -l)" -eq 2 ]

stop front
stop w1
stop w2
grep -q "worker 127.0.0.1:$p1 down: lost" "$logs/front"
