#!/usr/bin/env bash
# tools/gpu-check as the lent GPU machine runs it, without a GPU: a bundle of
# this build (--bundle, no rebuild), unpacked in a fresh folder away from the
# build tree, its check run through the CUDA shim (--from-bundle --shim);
# every step passes and the report says so, with a few of each GPU binary's
# tests (a gtest filter, to stay quick). Also: the bundle's libraries resolve
# everything its binaries need beyond glibc, the C++ runtime and CUDA.
#   gpu_check_shim.sh SOURCE_DIR BUILD_DIR OUT_DIR
set -euo pipefail
src=$1 build=$2 out=$3
rm -rf "$out"
mkdir -p "$out/fresh"
"$src/tools/gpu-check" --bundle="$out/gpu-bundle" --build-dir="$build" --skip-build
[ -f "$out/gpu-bundle.tar.xz" ] || { echo "no $out/gpu-bundle.tar.xz"; exit 1; }
tar -C "$out/fresh" -xJf "$out/gpu-bundle.tar.xz"
bundle=$out/fresh/gpu-bundle
grep -q '^run: ' "$bundle/MANIFEST" || { echo "MANIFEST: no run line"; exit 1; }

system_ok='^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcudart|libcublas|libcublasLt)\.so'
for b in "$bundle"/bin/*; do
  LD_LIBRARY_PATH=$bundle/lib ldd "$b" | awk '$2 == "=>" { print $1, $3 }' | while read -r lib path; do
    case $path in
      "$bundle"/lib/*) ;;
      not) echo "$(basename "$b"): $lib not found"; exit 1 ;;
      *) [[ $lib =~ $system_ok ]] || { echo "$(basename "$b"): $lib from $path, not the bundle"; exit 1; } ;;
    esac
  done
done

filter='cuda_test.cache_write_and_copy_blocks:*long_decode_splits_and_matches_reference/bf16_d128_bs16_gqa4'
filter+=':cuda_fault.*'
filter+=':*cuda_forward_test.mixed_prefill_batch_then_batched_decode/llama_f32_act_f32_kv_f32'
filter+=':model_runner_cuda.*:model_runtime_fault.*'
# NOTE: the device sampler's runner tests take half a minute through the
# emulator; the suite runs them on their own.
filter+='-*sampled_rows_with_every_filter*:*edits_overflow*'
(cd "$out/fresh" && ./gpu-bundle/gpu-check --from-bundle --shim --out="$out/report" --filter="$filter")
report=$out/report/report.txt
cat "$report"
for line in '^mode: +shim' '^== build: skipped' '^== suite: PASS' '^== bench: PASS' '^== serving: PASS' \
            '^  device: cuda:0 ' '^  decode_attention/batch:1/context:1100/dtype:2/split:1/' \
            '^  swap_out_bench/blocks:300/.* calls=2 ' '^result: PASS$'; do
  grep -Eq -- "$line" "$report" || { echo "report: no line matching '$line'"; exit 1; }
done
# kernels: 1 test + 1 split decode case; faults: 2; forward: 1 case; runner: 2 + 1 fault
[ "$(grep -Ec '\[  PASSED  \] [1-9][0-9]* tests?\.' "$report")" -eq 4 ] || { echo "report: not 4 gtest summaries"; exit 1; }
