#!/usr/bin/env bash
# Installs the GGUF reference reader (read.mjs and the pinned @huggingface/gguf
# of package-lock.json) into DEST:
#   tools/gguf-reference/fetch.sh DEST
# npm ci checks every package against the lockfile's integrity hash. kvactor's
# ctest fixture model.gguf_reference_reader calls this (into build/gguf-reference)
# before the GGUF reference test; an install whose lockfile matches is kept.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
src=$(cd "$(dirname "$0")" && pwd)
dest=$1
mkdir -p "$dest"
cp "$src/read.mjs" "$dest/"
if cmp -s "$src/package-lock.json" "$dest/package-lock.json" &&
   [ -f "$dest/node_modules/@huggingface/gguf/package.json" ]; then
  echo "gguf-reference: up to date in $dest" >&2
  exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --silent --no-audit --no-fund)
echo "gguf-reference: installed in $dest" >&2
