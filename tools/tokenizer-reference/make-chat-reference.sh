#!/usr/bin/env bash
# Remakes tests/model/chat_reference/: the published chat templates rendered by Debian's Jinja2
# (render-chats.py), then tokenized by Hugging Face's tokenizers library (make-chat-reference.mjs).
#   tools/tokenizer-reference/make-chat-reference.sh DIR    (DIR: fetch.sh's, e.g. build/tokenizers)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
/usr/bin/python3 "$here/render-chats.py" "$1" >"$rendered"
node "$here/make-chat-reference.mjs" "$1" "$rendered"
