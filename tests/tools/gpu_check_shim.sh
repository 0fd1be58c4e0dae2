#!/usr/bin/env bash
# tools/gpu-check --shim over this build (no GPU, no rebuild): every step
# passes and the report says so, with the suite's tests run in both GPU
# binaries' shim twins (a few of them, by a gtest filter, to stay quick).
#   gpu_check_shim.sh SOURCE_DIR BUILD_DIR OUT_DIR
set -euo pipefail
src=$1 build=$2 out=$3
rm -rf "$out"
filter='cuda_test.cache_write_and_copy_blocks:*long_decode_splits_and_matches_reference/bf16_d128_bs16_gqa4'
filter+=':*cuda_forward_test.mixed_prefill_batch_then_batched_decode/llama_f32_act_f32_kv_f32'
filter+=':model_runner_cuda.*'
"$src/tools/gpu-check" --shim --skip-build --build-dir="$build" --out="$out" --filter="$filter"
report=$out/report.txt
cat "$report"
for line in '^mode: +shim' '^== build: skipped' '^== suite: PASS' '^== bench: PASS' '^== serving: PASS' \
            '^  device: cuda:0 ' '^  decode_attention/batch:1/context:1100/dtype:2/split:1/' \
            '^  swap_out_bench/blocks:300/.* calls=2 ' '^result: PASS$'; do
  grep -Eq -- "$line" "$report" || { echo "report: no line matching '$line'"; exit 1; }
done
# kernels: 1 test + 1 split decode case; forward: 1 case; runner: 2 tests
[ "$(grep -Ec '\[  PASSED  \] [1-9][0-9]* tests?\.' "$report")" -eq 3 ] || { echo "report: not 3 gtest summaries"; exit 1; }
