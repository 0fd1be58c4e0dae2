#!/usr/bin/env bash
# kvactor-bench --openai against a running kvactor-serve, as a user runs the
# side by side: every request ends, the table and the JSON are written; a
# bad target is refused with a message naming it.
#   bench_side_by_side.sh SERVE BENCH MODEL_DIR
set -euo pipefail
serve=$1 bench=$2 model=$3
source "$(dirname "$0")/http_server.sh"
start_http_server "$serve" "$model" --kv-cache-mib=16
out_dir=$(mktemp -d)
trap 'kill -9 ${pid:-0} 2>/dev/null || true; rm -rf "$log" "$out_dir"' EXIT

out=$("$bench" --openai="127.0.0.1:$http_port" --quick --sweep=1,3 --openai-prompt=20 --openai-output=6 \
        --model="$model" --out="$out_dir")
echo "$out"
# Each concurrency greedy, then sampled.
for mode in greedy sampled; do
  grep -q "concurrency 3, $mode, 127.0.0.1:$http_port: 3/3 ok" <<<"$out"
  grep -q "^| 1 | $mode | 127.0.0.1:$http_port | " <<<"$out"
  grep -q '"concurrency":3,"decoding":"'$mode'","server":"127.0.0.1:'"$http_port"'","requests":3,"ok":3' \
    "$out_dir/side_by_side.json"
done
# 2 x (1 + 3) requests of 6 tokens, counted by the server too
grep -q '^kvactor:generation_tokens_total{[^}]*} 48' <(exec 3<>"/dev/tcp/127.0.0.1/$http_port";
  printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3; timeout 30 cat <&3 | tr -d '\r')

if "$bench" --openai=127.0.0.1 --quick --model="$model" --out="$out_dir" 2>"$out_dir/err"; then
  echo "a target without a port was accepted"; exit 1
fi
grep -q "'127.0.0.1' is not HOST:PORT" "$out_dir/err"
