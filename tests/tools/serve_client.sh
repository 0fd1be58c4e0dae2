#!/usr/bin/env bash
# kvactor-serve and kvactor-client as a user runs them: a streamed
# generation, a raw protocol session over a plain socket, the figures, and a
# clean stop on SIGINT.
#   serve_client.sh SERVE CLIENT MODEL_DIR
set -euo pipefail
serve=$1 client=$2 model=$3
log=$(mktemp)
"$serve" --model="$model" --port=0 --kv-cache-mib=16 >"$log" 2>&1 &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do
  grep -q 'kvactor listening on' "$log" && break
  sleep 0.1
done
port=$(sed -n 's/.*kvactor listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$log")
[ -n "$port" ] || { echo "the server did not start:"; cat "$log"; exit 1; }

out=$("$client" --port="$port" --max-tokens=8 "Once upon a time")
echo "$out"
grep -q '^\[max_tokens: 8 tokens' <<<"$out"

json=$("$client" --port="$port" --max-tokens=3 --json "hello")
[ "$(grep -c '"event":"token"' <<<"$json")" -eq 3 ]
grep -q '"event":"done"' <<<"$json"

# Three choices of one prompt, each printed when it ends.
three=$("$client" --port="$port" --max-tokens=4 --temperature=1 --n=3 "Once upon a time")
echo "$three"
for c in 0 1 2; do grep -q "^choice $c: " <<<"$three"; done
[ "$(grep -c '^\[max_tokens: 4 tokens' <<<"$three")" -eq 3 ]

# The raw protocol, as nc would send it.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf '%s\n' '{"op":"ping"}' 'not json' '{"op":"generate","id":"r1","prompt_tokens":[1,2,3],"max_tokens":2}' >&3
read -r -t 30 pong <&3
read -r -t 30 bad <&3
echo "$pong"; echo "$bad"
[[ $pong == '{"event":"pong"}' ]]
[[ $bad == *'"code":"bad_json"'* ]]
while read -r -t 30 line <&3; do
  echo "$line"
  [[ $line == *'"event":"done"'* ]] && break
done
[[ $line == *'"finish_reason":"max_tokens"'* ]]
exec 3>&-

stats=$("$client" --port="$port" --stats)
echo "$stats"
grep -q '"device_blocks_in_use":0,' <<<"$stats"
grep -q '"invariants_ok":true' <<<"$stats"

kill -INT $pid
wait $pid
grep -q 'shutting down' "$log"
