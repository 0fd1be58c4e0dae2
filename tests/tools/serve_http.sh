#!/usr/bin/env bash
# kvactor-serve's HTTP front as a user reaches it, over a plain socket: a
# completion of a text prompt on the real tokenizer and model, a stream, the
# model list, the metrics, an error, and a clean stop on SIGINT.
#   serve_http.sh SERVE MODEL_DIR
set -euo pipefail
serve=$1 model=$2
source "$(dirname "$0")/http_server.sh"
start_http_server "$serve" "$model" --kv-cache-mib=16
name=$(basename "$model")
grep -q "model '$name'" "$log"

out=$(http POST /v1/completions '{"prompt":"Once upon a time","max_tokens":5,"temperature":0,"ignore_eos":true}')
echo "$out"
grep -q '^HTTP/1.1 200 OK' <<<"$out"
grep -q '"finish_reason":"length"' <<<"$out"
grep -q '"completion_tokens":5,' <<<"$out"

out=$(http POST /v1/completions '{"prompt":"hello","max_tokens":3,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}')
echo "$out"
grep -q 'Transfer-Encoding: chunked' <<<"$out"
grep -q 'data: \[DONE\]' <<<"$out"
grep -q '"usage":{"prompt_tokens":' <<<"$out"

out=$(http GET /v1/models)
grep -q "\"id\":\"$name\"" <<<"$out"

out=$(http POST /v1/completions '{"prompt":"a","temperature":5}')
echo "$out"
grep -q '^HTTP/1.1 400' <<<"$out"
grep -q '"param":"temperature"' <<<"$out"

out=$(http GET /metrics)
grep -q '^kvactor:generation_tokens_total{model_name="'"$name"'"} 8$' <<<"$(tr -d '\r' <<<"$out")"
grep -q '^HTTP/1.1 200' <<<"$(http GET /health)"

kill -INT $pid
wait $pid
grep -q 'shutting down' "$log"
