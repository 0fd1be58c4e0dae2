# kvactor_fuzz(): what a fuzz test's script (cmake -P) calls: builds a
# libFuzzer target with clang (libFuzzer + AddressSanitizer +
# UndefinedBehaviorSanitizer) from its sources, then runs it for a bounded
# time from a seed corpus; a failure it finds fails the test. The script is
# given CLANGXX, SOURCE_DIR, BINARY_DIR and SECONDS.
#   kvactor_fuzz(NAME name SOURCES a.cpp... [INCLUDES dir...] [LIBS -lx...]
#                SEEDS file... MAX_LEN bytes)
# SOURCES and SEEDS: absolute paths. The corpus (BINARY_DIR/NAME_corpus)
# starts from the seeds and keeps what earlier runs added.
function(kvactor_fuzz)
  cmake_parse_arguments(PARSE_ARGV 0 fuzz "" "NAME;MAX_LEN" "SOURCES;INCLUDES;LIBS;SEEDS")
  set(fuzzer ${BINARY_DIR}/${fuzz_NAME})
  set(includes -I${SOURCE_DIR})
  foreach(dir IN LISTS fuzz_INCLUDES)
    list(APPEND includes -I${dir})
  endforeach()
  execute_process(
    COMMAND ${CLANGXX} -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
            -fno-sanitize-recover=undefined ${includes} ${fuzz_SOURCES} ${fuzz_LIBS} -lpthread
            -o ${fuzzer}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building ${fuzz_NAME} failed (${rc})")
  endif()
  set(corpus ${BINARY_DIR}/${fuzz_NAME}_corpus)
  file(MAKE_DIRECTORY ${corpus})
  file(COPY ${fuzz_SEEDS} DESTINATION ${corpus})
  execute_process(COMMAND ${fuzzer} -seed=1 -max_total_time=${SECONDS} -max_len=${fuzz_MAX_LEN}
                          -timeout=10 -artifact_prefix=${fuzzer}_ ${corpus}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${fuzz_NAME} found a failure (${rc}); see the output above. "
                        "The input is ${fuzzer}_crash-* (or _leak-, _oom-, _timeout-): "
                        "${fuzzer} FILE runs it again.")
  endif()
endfunction()
