#!/usr/bin/env bash
# kvactor-serve on broken model folders exits 1 with a message naming the
# folder or file at fault, and never starts listening.
#   serve_bad_model.sh SERVE SCRATCH_DIR TINY_MODEL_DIR
set -uo pipefail
serve=$1 scratch=$2 tiny=$3
rm -rf "$scratch" && mkdir -p "$scratch/no-config" "$scratch/bad-json"
echo '{"hidden_size": 64,' >"$scratch/bad-json/config.json"
# A sound model whose generation_config.json sets a default out of range.
cp -r "$tiny" "$scratch/bad-defaults"
echo '{"do_sample": true, "top_p": 2}' >"$scratch/bad-defaults/generation_config.json"

check() { # folder, expected text
  out=$("$serve" --model="$1" --port=0 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 1 ] || { echo "exit code $rc, expected 1"; exit 1; }
  grep -q "$2" <<<"$out" || { echo "the message does not name '$2'"; exit 1; }
  if grep -q 'kvactor listening' <<<"$out"; then echo "it started listening"; exit 1; fi
}
check "$scratch/missing" "$scratch/missing"
check "$scratch/no-config" "config.json"
check "$scratch/bad-json" "config.json"
check "$scratch/bad-defaults" "generation_config.json: key 'top_p'"
