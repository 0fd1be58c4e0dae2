#!/usr/bin/env bash
# kvactor-serve's chat completions as OpenAI's official Node client drives
# them (openai_client.mjs): tool calling and structured outputs on the tiny
# model, which has no chat template (calls in the json format), then the
# tool calling again on a copy of it given Qwen2.5's chat template (hermes).
#   serve_openai_client.sh SERVE MODEL_DIR QWEN_CONFIG NODE_MODULES_DIR
# QWEN_CONFIG: Qwen2.5's tokenizer_config.json (the fixture tokenizer_files);
# NODE_MODULES_DIR: where tools/openai-client/fetch.sh put openai (the
# fixture openai_client).
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 SERVE MODEL_DIR QWEN_CONFIG NODE_MODULES_DIR" >&2; exit 2; }
serve=$1 model=$2 qwen_config=$3 node_modules=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/http_server.sh"
work=$(mktemp -d)
# http_server.sh's own cleanup, and the folder.
trap '[ -z "${pid:-}" ] || kill -9 "$pid" 2>/dev/null || true; rm -f "$log"; rm -rf "$work"' EXIT

[ -f "$node_modules/openai/index.mjs" ] || { echo "no openai package in $node_modules" >&2; exit 1; }
# An ES module finds "openai" in a node_modules beside it or above it, never
# through NODE_PATH: the script runs from a folder with a link to the package.
ln -s "$(cd "$node_modules" && pwd)" "$work/node_modules"
cp "$here/openai_client.mjs" "$work/"

# 64 MiB of KV cache: 4096 tokens, room for max_tokens 1024 after a round
# trip's history.
start_http_server "$serve" "$model" --kv-cache-mib=64
grep -q "chat template: none" "$log"
node "$work/openai_client.mjs" "http://127.0.0.1:$http_port/v1" "$(basename "$model")" \
  --format=json --label=json
kill -INT $pid
wait $pid

# The same weights and tokenizer with Qwen2.5's chat_template added to
# tokenizer_config.json (the weights linked, not copied).
qwen=$work/tiny-qwen2_5
mkdir "$qwen"
for f in "$model"/*; do
  case $f in
    *.json) cp "$f" "$qwen/" ;;
    *) ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$qwen/" ;;
  esac
done
node -e '
  const fs = require("fs"), [config, qwen] = process.argv.slice(1);
  const c = JSON.parse(fs.readFileSync(config, "utf8"));
  const template = JSON.parse(fs.readFileSync(qwen, "utf8")).chat_template;
  if (typeof template !== "string" || !template.includes("<tool_call>"))
    throw new Error(`${qwen} has no chat_template with tool calls`);
  c.chat_template = template;
  fs.writeFileSync(config, JSON.stringify(c, null, 2) + "\n");
' "$qwen/tokenizer_config.json" "$qwen_config"
start_http_server "$serve" "$qwen" --kv-cache-mib=64
grep -q "chat template: the model's" "$log"
node "$work/openai_client.mjs" "http://127.0.0.1:$http_port/v1" "$(basename "$qwen")" \
  --tools-only --format=hermes --label=hermes
kill -INT $pid
wait $pid
