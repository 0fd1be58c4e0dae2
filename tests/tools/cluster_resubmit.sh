#!/usr/bin/env bash
# A front with --resubmit-lost: a worker killed while one of its requests
# streams and three wait (it runs one at a time, slowly) ends the streaming
# one with worker_lost, and the three start again on the other worker, with
# the tokens that worker gives them afresh and their stats counted.
#   cluster_resubmit.sh SERVE MODEL_DIR
set -euo pipefail
serve=$1 model=$2
. "$(dirname "$0")/cluster_lib.sh"
common=(--model="$model" --kv-cache-mib=16 --threads=1)

# Only w1 is up when the requests come, so all go to it.
start w1 "${common[@]}" --worker-port=0 --max-seqs=1 --fault-jitter-ms=50
p1=$(worker_port w1)
p2=$(unused_port)
start front --model="$model" --port=0 --workers="127.0.0.1:$p1,127.0.0.1:$p2" --resubmit-lost
front=$(listen_port front)
wait_live "$front" 1

request() { echo "{\"op\":\"generate\",\"id\":\"r$1\",\"prompt\":\"moving story $1\",\"max_tokens\":$2,\"ignore_eos\":true}"; }
exec {c}<>"/dev/tcp/127.0.0.1/$front"
for i in 1 2 3 4; do request $i 400; done >&$c
# One request streams (for seconds); the others wait behind it on w1.
while read -r -t 30 line <&$c; do
  [[ $line == *'"event":"token"'* ]] && break
done
first=$(sed 's/.*"id":"\([^"]*\)".*/\1/' <<<"$line")
start w2 "${common[@]}" --worker-port="$p2"
worker_port w2 >/dev/null
wait_live "$front" 2
kill -9 "${pids[w1]}"
wait "${pids[w1]}" || true
unset "pids[w1]"

lost=() finished=()
while [ $((${#lost[@]} + ${#finished[@]})) -lt 4 ] && read -r -t 60 line <&$c; do
  case $line in
    *'"event":"error"'*'"code":"worker_lost"'*) lost+=("$line") ;;
    *'"event":"done"'*'"finish_reason":"max_tokens"'*) finished+=("$line") ;;
    *'"event":"done"'*|*'"event":"error"'*) echo "unexpected: $line"; exit 1 ;;
  esac
done
exec {c}>&-
printf '%s\n' "${lost[@]}" "${finished[@]}"
[ "${#lost[@]}" -eq 1 ] && [[ ${lost[0]} == *"\"id\":\"$first\""* ]]
[ "${#finished[@]}" -eq 3 ]

s=$(stats "$front")
echo "$s"
[ "$(field_values "$s" requests_resubmitted | head -1)" -eq 3 ]

# Each moved request has the tokens w2 gives it from the start.
printf '%s\n' "${finished[@]}" | outputs | sort >"$logs/moved"
for line in "${finished[@]}"; do
  id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' <<<"$line")
  request "${id#r}" 400
done >"$logs/req"
batch "$front" "$logs/req" | outputs | sort >"$logs/afresh"
cat "$logs/moved"
diff "$logs/moved" "$logs/afresh"
stop front
stop w2
