#!/usr/bin/env bash
# Published tokenizers and chat templates served end to end by kvactor-serve's
# HTTP front: small random models of the Qwen2 layout (q/k/v biases) under
# Qwen2.5's tokenizer.json and chat template, and of the Llama layout under a
# SentencePiece tokenizer (Llama 2 / Mistral 7B's vocabulary). The prompt ids
# the server reports (return_token_ids) equal Hugging Face's: the checked-in
# reference data of the tokenizer and chat template tests, made by its own
# tokenizers library and by Jinja2. A template file given with
# --chat-template renders the chats of a model that has none.
#   serve_checkpoint.sh SERVE MAKE_TINY TOKENIZERS_DIR SCRATCH_DIR REFERENCE_DIR
set -euo pipefail
serve=$1 make_tiny=$2 tokenizers=$3 scratch=$4 reference=$5
source "$(dirname "$0")/http_server.sh"

# A random model of the style and vocabulary, with the family's tokenizer files
# and its BOS and EOS ids in config.json.
checkpoint() { # DIR STYLE VOCAB FAMILY BOS EOS
  rm -rf "$1"
  "$make_tiny" --out="$1" --style="$2" --vocab="$3" --hidden=64 --layers=2 --heads=2 --kv-heads=1 \
    --head-dim=32 --intermediate=128 --context=2048 >/dev/null
  cp "$tokenizers/$4/tokenizer.json" "$tokenizers/$4/tokenizer_config.json" "$1/"
  sed -i -E "s/\"bos_token_id\": [0-9]+/\"bos_token_id\": $5/; s/\"eos_token_id\": [0-9]+/\"eos_token_id\": $6/" \
    "$1/config.json" "$1/generation_config.json"
}

body() { sed '1,/^\r$/d'; } # an HTTP response without its head

# The JSON value at a path of keys and indexes, as JSON.
json_at() { # PATH... (stdin: JSON)
  /usr/bin/python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v, separators=(",", ":")))' "$@"
}

expect_equal() { # WHAT GOT WANT
  [ "$2" = "$3" ] || { echo "$1: got $2, expected $3"; exit 1; }
  echo "$1: $2"
}

# Qwen2.5: a chat rendered by its published template, tokenized by its tokenizer.
checkpoint "$scratch/qwen2_5" qwen2 151936 qwen2_5 151643 151645
start_http_server "$serve" "$scratch/qwen2_5" --kv-cache-mib=16
grep -q "chat template: the model's, run by Jinja2" "$log"
out=$(http POST /v1/chat/completions \
  '{"messages":[{"role":"user","content":"Hello"}],"max_tokens":4,"ignore_eos":true,"return_token_ids":true}')
echo "$out"
grep -q '^HTTP/1.1 200 OK' <<<"$out"
expect_equal "qwen2.5 chat prompt ids" "$(body <<<"$out" | json_at prompt_token_ids)" \
  "$(json_at cases 0 ids <"$reference/chat_reference/qwen2_5.json")"
expect_equal "qwen2.5 completion tokens" "$(body <<<"$out" | json_at usage completion_tokens)" 4
# A conversation the template refuses is a 400 on messages.
out=$(http POST /v1/chat/completions '{"messages":[{"role":"user","content":"a"}],"chat_template_kwargs":7}')
grep -q '^HTTP/1.1 400' <<<"$out"
kill -INT $pid
wait $pid

# A SentencePiece Llama: its BOS <s> and ids for a text prompt, and text back.
checkpoint "$scratch/llama2" llama 32000 llama2 1 2
start_http_server "$serve" "$scratch/llama2" --kv-cache-mib=16
grep -q "chat template: none (plain)" "$log"
out=$(http POST /v1/completions \
  '{"prompt":"Hello world","max_tokens":4,"ignore_eos":true,"temperature":0,"return_token_ids":true}')
echo "$out"
grep -q '^HTTP/1.1 200 OK' <<<"$out"
expect_equal "llama2 prompt ids" "$(body <<<"$out" | json_at choices 0 prompt_token_ids)" \
  "$(json_at cases 0 ids <"$reference/tokenizer_reference/llama2.json")"
# The streamed text is what the whole sequence decodes to after the prompt.
text=$(body <<<"$out" | json_at choices 0 text)
ids=$(body <<<"$out" | json_at choices 0 token_ids)
whole=$(http POST /detokenize "{\"tokens\":[1,22557,1526,${ids:1}}" | body | json_at prompt)
expect_equal "llama2 text" "\"<s> Hello world${text:1}" "$whole"
out=$(http POST /tokenize '{"prompt":"Hello world"}')
expect_equal "llama2 /tokenize" "$(body <<<"$out" | json_at tokens)" \
  "$(json_at cases 0 ids <"$reference/tokenizer_reference/llama2.json")"
out=$(http POST /detokenize '{"tokens":[1,22557,1526]}')
expect_equal "llama2 /detokenize" "$(body <<<"$out" | json_at prompt)" '"<s> Hello world"'
kill -INT $pid
wait $pid

# --chat-template: a template file instead of the model's own, which here
# does not compile (the server refuses the model without it), with the
# model's special tokens; a chat's prompt is the text it renders, tokenized
# as given.
rm -rf "$scratch/llama2-broken"
cp -r "$scratch/llama2" "$scratch/llama2-broken"
printf '{%% if %%}' >"$scratch/llama2-broken/chat_template.jinja"
printf '%s' '{{ bos_token }}[INST] {{ messages[0].content }} [/INST]' >"$scratch/inst.jinja"
refused() { # WHAT_THE_LOG_SAYS kvactor-serve options...
  local says=$1
  shift
  if timeout 60 "$serve" --model="$scratch/llama2-broken" --port=0 "$@" >"$log" 2>&1; then
    echo "kvactor-serve started with $*"; exit 1
  fi
  cat "$log"
  grep -q -F -- "kvactor-serve: $says" "$log"
}
broken=$scratch/llama2-broken/chat_template.jinja
# The option is named where it was not given.
refused "$broken: chat template: line 1" --http-port="$(unused_port)"
grep -q -- "(--chat-template=FILE serves the model with another)" "$log"
refused "$broken: chat template: line 1" --http-port="$(unused_port)" --chat-template="$broken"
if grep -q -- "--chat-template=FILE" "$log"; then exit 1; fi
# Checked before the model loads.
refused "--chat-template=$scratch/missing.jinja: not a file" --http-port="$(unused_port)" \
  --chat-template="$scratch/missing.jinja"
refused "--chat-template needs --http-port" --chat-template="$scratch/inst.jinja"
start_http_server "$serve" "$scratch/llama2-broken" --kv-cache-mib=16 --chat-template="$scratch/inst.jinja"
grep -q "chat template: $scratch/inst.jinja, run by Jinja2" "$log"
out=$(http POST /v1/chat/completions \
  '{"messages":[{"role":"user","content":"Hello world"}],"max_tokens":2,"ignore_eos":true,"return_token_ids":true}')
grep -q '^HTTP/1.1 200 OK' <<<"$out" || { echo "$out"; exit 1; }
expect_equal "llama2 chat prompt ids, --chat-template" "$(body <<<"$out" | json_at prompt_token_ids)" \
  "$(http POST /tokenize '{"prompt":"<s>[INST] Hello world [/INST]","add_special_tokens":false}' |
    body | json_at tokens)"
kill -INT $pid
wait $pid
