#!/usr/bin/env bash
# GGUF files served through both front doors. kvactor-make-tiny writes a
# small model folder and the same model as GGUF files (fp32, Q8_0, Q4_0,
# Q4_1, Q5_0, Q5_1, IQ4_NL, and the Q4_K_M and Q5_K_M mixes as
# llama-quantize falls back on rows narrower than a super-block: Q5_0, Q5_1
# and Q8_0; on a wider model Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS and the
# Q4_K_M and Q5_K_M mixes; and a model made as
# Llama 3.1's and 3.2's files are, scaled RoPE and a tied embedding, in fp32
# and Q4_K_M; the tokenizer in the file's metadata);
# kvactor-serve serves each file, and its answers equal the folder's: the
# same prompt ids (the tokenizer read back from GGUF), and the same
# generated ids, over HTTP and over the line protocol (fp32: the folder's
# weights; the others: the folder served with --weights=FORMAT, which
# quantises to the same blocks). The mixes hold formats no folder quantises
# to: their prompt ids equal the folder's, their two front doors agree, and
# the multi-node front (tokenizing from the file, a worker serving it)
# answers as the single node does.
#   serve_gguf.sh SERVE MAKE_TINY CLIENT SCRATCH_DIR
set -euo pipefail
serve=$1 make_tiny=$2 client=$3 scratch=$4
source "$(dirname "$0")/http_server.sh"
trap 'kill -9 ${pid:-0} ${worker:-0} 2>/dev/null || true; rm -f "$log"' EXIT

rm -rf "$scratch"
"$make_tiny" --out="$scratch/llama" --vocab=512 --hidden=64 --layers=2 --heads=2 --kv-heads=1 \
  --head-dim=32 --intermediate=128 --context=512 --untied --gguf=f32,q8_0,q4_0,q4_1,q5_0,q5_1,iq4_nl,q4_k_m,q5_k_m
# The K formats' rows are whole super-blocks of 256 values.
"$make_tiny" --out="$scratch/wide" --vocab=512 --hidden=256 --layers=2 --heads=4 --kv-heads=2 \
  --head-dim=64 --intermediate=512 --context=512 --untied --gguf=q2_k,q3_k,q4_k,q5_k,q6_k,iq4_xs,q4_k_m,q5_k_m
# As Llama 3.1 and 3.2 files: the RoPE's llama3 scaling (past an original
# context of 64) in rope_freqs.weight, and a tied embedding (Q6_K in Q4_K_M).
"$make_tiny" --out="$scratch/llama31" --vocab=512 --hidden=256 --layers=2 --heads=4 --kv-heads=2 \
  --head-dim=64 --intermediate=512 --context=512 --tied --rope-scaling=llama3:64 --gguf=f32,q4_k_m

body() { sed '1,/^\r$/d'; } # an HTTP response without its head
json_at() { # PATH... (stdin: JSON)
  /usr/bin/python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v, separators=(",", ":")))' "$@"
}

request='{"prompt":"Once upon a time","max_tokens":8,"ignore_eos":true,"temperature":0,"return_token_ids":true}'
# The prompt ids and generated ids of one completion, and the line
# protocol's tokens of the same prompt ids. NOTE: run in this shell, not in
# $(...): http_server.sh's exit trap kills $pid, which must be set here.
answers() { # MODEL [kvactor-serve options]
  start_http_server "$serve" "$@" --kv-cache-mib=16 >/dev/null
  local out prompt line_port l
  out=$(http POST /v1/completions "$request")
  grep -q '^HTTP/1.1 200 OK' <<<"$out" || { echo "$out"; exit 1; }
  prompt=$(body <<<"$out" | json_at choices 0 prompt_token_ids)
  echo "prompt $prompt"
  echo "http $(body <<<"$out" | json_at choices 0 token_ids)"
  line_port=$(sed -n 's/.*kvactor listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$log")
  if [[ " $* " == *" --workers="* ]]; then # a front: until its worker is live (30 s)
    for _ in $(seq 1 300); do
      exec 3<>"/dev/tcp/127.0.0.1/$line_port"
      printf '{"op":"stats"}\n' >&3
      read -r -t 30 l <&3
      exec 3>&-
      [[ $l == *'"state":"live"'* ]] && break
      sleep 0.1
    done
  fi
  exec 3<>"/dev/tcp/127.0.0.1/$line_port"
  printf '{"op":"generate","id":"g","prompt_tokens":%s,"max_tokens":8,"ignore_eos":true,"temperature":0}\n' \
    "$prompt" >&3
  local ids=() l
  while read -r -t 30 l <&3; do
    [[ $l == *'"event":"done"'* ]] && break
    [[ $l == *'"event":"token"'* ]] && ids+=("$(json_at token <<<"$l")")
  done
  exec 3>&-
  echo "line [$(IFS=,; echo "${ids[*]}")]"
  kill -INT $pid
  wait $pid
}

for type in f32 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl q2_k q3_k q4_k q5_k q6_k iq4_xs llama31/f32; do
  folder=$scratch/$(case $type in q?_k | iq4_xs) echo wide ;; */*) echo "${type%/*}" ;; *) echo llama ;; esac)
  label=$type type=${type#*/}
  answers "$folder" --weights="$type" >"$scratch/want"
  answers "$folder/model-$type.gguf" >"$scratch/got"
  want=$(cat "$scratch/want") got=$(cat "$scratch/got")
  echo "$label folder: $want"
  echo "$label gguf:   $got"
  [ "$got" = "$want" ] || { echo "the GGUF file's answers differ from the folder's"; exit 1; }
  [ "$(sed -n 's/^http //p' <<<"$got")" = "$(sed -n 's/^line //p' <<<"$got")" ]
done

for mix in llama/model-q4_k_m llama/model-q5_k_m llama31/model-q4_k_m wide/model-q5_k_m \
  wide/model-q4_k_m; do
  answers "$scratch/${mix%%/*}" >"$scratch/want"
  answers "$scratch/$mix.gguf" >"$scratch/got"
  echo "$mix gguf: $(cat "$scratch/got")"
  [ "$(sed -n 's/^prompt //p' "$scratch/got")" = "$(sed -n 's/^prompt //p' "$scratch/want")" ]
  [ "$(sed -n 's/^http //p' "$scratch/got")" = "$(sed -n 's/^line //p' "$scratch/got")" ]
done

# The multi-node front: a worker serving the Q4_K_M file behind a front
# answers as the single node did.
gguf=$scratch/wide/model-q4_k_m.gguf
"$serve" --model="$gguf" --worker-port=0 --kv-cache-mib=16 >"$scratch/worker.log" 2>&1 &
worker=$!
for _ in $(seq 1 300); do
  grep -q 'kvactor worker on' "$scratch/worker.log" && break
  sleep 0.1
done
worker_port=$(sed -n 's/.*kvactor worker on 127.0.0.1:\([0-9]*\).*/\1/p' "$scratch/worker.log")
answers "$gguf" --workers="127.0.0.1:$worker_port" >"$scratch/front"
echo "q4_k_m front: $(cat "$scratch/front")"
[ "$(cat "$scratch/front")" = "$(cat "$scratch/got")" ]
kill -INT $worker
wait $worker

# A GGUF file kvactor cannot serve: an error naming the file, exit code 1.
printf 'GGUF\x01\x00\x00\x00' >"$scratch/old.gguf"
if "$serve" --model="$scratch/old.gguf" --port=0 >"$log" 2>&1; then exit 1; fi
cat "$log"
grep -q "old.gguf" "$log"
