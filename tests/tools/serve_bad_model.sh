#!/usr/bin/env bash
# kvactor-serve on broken model folders exits 1 with a message naming the
# folder or file at fault, and never starts listening.
#   serve_bad_model.sh SERVE SCRATCH_DIR
set -uo pipefail
serve=$1 scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch/no-config" "$scratch/bad-json"
echo '{"hidden_size": 64,' >"$scratch/bad-json/config.json"

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
