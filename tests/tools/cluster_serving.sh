#!/usr/bin/env bash
# A front and two workers against a single node: the same outputs for
# concurrent requests (greedy and seeded sampling), shared-prefix requests
# all routed to one worker (the front's per-worker stats), aggregate stats,
# a completion through the HTTP front, and clean stops.
#   cluster_serving.sh SERVE MODEL_DIR
set -euo pipefail
serve=$1 model=$2
. "$(dirname "$0")/cluster_lib.sh"
common=(--model="$model" --kv-cache-mib=16 --threads=1 --scheduler.max-threads=2)

start single "${common[@]}" --port=0
start w1 "${common[@]}" --worker-port=0
start w2 "${common[@]}" --worker-port=0
single=$(listen_port single) p1=$(worker_port w1) p2=$(worker_port w2)
start_http front --model="$model" --port=0 --workers="127.0.0.1:$p1,127.0.0.1:$p2"
front=$(listen_port front)
wait_live "$front" 2

# Twelve concurrent requests: text and token prompts, greedy and sampled.
reqs=$logs/requests
for i in $(seq 1 12); do
  if [ $((i % 3)) -eq 0 ]; then
    echo "{\"op\":\"generate\",\"id\":\"r$i\",\"prompt_tokens\":[$i,7,9,11,13,2,4,6,8,$i],\"max_tokens\":12}"
  elif [ $((i % 3)) -eq 1 ]; then
    echo "{\"op\":\"generate\",\"id\":\"r$i\",\"prompt\":\"story number $i begins\",\"max_tokens\":16,\"ignore_eos\":true}"
  else
    echo "{\"op\":\"generate\",\"id\":\"r$i\",\"prompt\":\"sample $i\",\"max_tokens\":10,\"temperature\":0.9,\"seed\":$i}"
  fi
done >"$reqs"
batch "$single" "$reqs" | outputs >"$logs/single.out"
batch "$front" "$reqs" | outputs >"$logs/front.out"
cat "$logs/front.out"
[ "$(wc -l <"$logs/single.out")" -eq 12 ]
diff "$logs/single.out" "$logs/front.out"

# Both workers served some of them.
s=$(stats "$front")
echo "$s"
mapfile -t routed < <(field_values "$s" requests_routed)
[ "${routed[0]}" -gt 0 ] && [ "${routed[1]}" -gt 0 ]
[ $((routed[0] + routed[1])) -eq 12 ]
grep -q '"invariants_ok":true' <<<"$s"
# The aggregate counts both workers' finished requests.
[ "$(field_values "$s" requests_finished | head -1)" -eq 12 ]

# The HTTP front over the same front.
exec {h}<>"/dev/tcp/127.0.0.1/$http_port"
body='{"prompt":"Once upon a time","max_tokens":5,"temperature":0,"ignore_eos":true}'
printf 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' \
  "${#body}" "$body" >&$h
out=$(timeout 60 cat <&$h)
exec {h}>&-
echo "$out"
grep -q '^HTTP/1.1 200 OK' <<<"$out"
grep -q '"completion_tokens":5,' <<<"$out"
s=$(stats "$front")
mapfile -t routed < <(field_values "$s" requests_routed)

# Six requests sharing their first KV block (8 tokens), one after another:
# all on one worker.
for i in $(seq 1 6); do
  echo "{\"op\":\"generate\",\"id\":\"p$i\",\"prompt_tokens\":[21,22,23,24,25,26,27,28,$i,$i],\"max_tokens\":4}" >"$reqs"
  batch "$front" "$reqs" | grep -q '"finish_reason":"max_tokens"'
done
s=$(stats "$front")
echo "$s"
mapfile -t after < <(field_values "$s" requests_routed)
d0=$((after[0] - routed[0])) d1=$((after[1] - routed[1]))
echo "shared prefix: worker 1 got $d0, worker 2 got $d1"
{ [ "$d0" -eq 6 ] && [ "$d1" -eq 0 ]; } || { [ "$d0" -eq 0 ] && [ "$d1" -eq 6 ]; }

stop front
stop w1
stop w2
stop single
grep -q 'worker 127.0.0.1:'"$p1"' joined' "$logs/front"
