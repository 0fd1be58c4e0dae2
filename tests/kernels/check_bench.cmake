# Runs kvactor-bench-kernels (BENCH) on the cuda device with --tiny and fails
# unless it exits 0 and prints every expected row: decode with and without
# split-K (the split rows planning more than one split), cache write, and the swaps with
# their calls per swap (300 blocks: 2 kernel launches). No timing is checked.
execute_process(COMMAND ${BENCH} --device=cuda --tiny RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kvactor-bench-kernels exited with ${rc}:\n${err}")
endif()
if(out MATCHES "ERROR OCCURRED")
  message(FATAL_ERROR "a benchmark reported an error")
endif()
string(REPLACE ";" "," out "${out}")
string(REPLACE "\n" ";" lines "${out}")
foreach(row
    "^device: cuda:0 "
    "^decode_attention/batch:1/context:1100/dtype:0/split:0/.* splits=1$"
    "^decode_attention/batch:1/context:1100/dtype:0/split:1/.* splits=([2-9]|[1-9][0-9]+)$"
    "^decode_attention/batch:2/context:1100/dtype:2/split:0/.* splits=1$"
    "^decode_attention/batch:2/context:1100/dtype:2/split:1/.* splits=([2-9]|[1-9][0-9]+)$"
    "^cache_write_bench/tokens:16/dtype:0/.* ratio="
    "^cache_write_bench/tokens:16/dtype:2/.* ratio="
    "^swap_out_bench/blocks:16/.* calls=1 cuda_calls=1 cuda_calls_per_copy=128 .*ratio="
    "^swap_out_bench/blocks:300/.* calls=2 cuda_calls=2 .*ratio=")
  set(found FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "${row}")
      set(found TRUE)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "no row matching '${row}' in the output")
  endif()
endforeach()
