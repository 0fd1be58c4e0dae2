# kvactor_fuzz(): what a fuzz test's script (cmake -P) calls: builds a
# libFuzzer target with clang (libFuzzer + AddressSanitizer +
# UndefinedBehaviorSanitizer) from its sources, then runs it for a bounded
# time from a seed corpus; a failure it finds fails the test. The script is
# given CLANGXX, SOURCE_DIR, BINARY_DIR and SECONDS.
#   kvactor_fuzz(NAME name SOURCES a.cpp... [INCLUDES dir...] [LIBS -lx...]
#                SEEDS file... MAX_LEN bytes)
# SOURCES and SEEDS: absolute paths; every source is linked, so a glob of
# them must not take in one that needs libraries the LIBS lack. The corpus
# (BINARY_DIR/NAME_corpus) starts from the seeds and keeps what earlier
# runs added; each input runs for at most 10 s.
function(kvactor_fuzz)
  cmake_parse_arguments(PARSE_ARGV 0 fuzz "" "NAME;MAX_LEN" "SOURCES;INCLUDES;LIBS;SEEDS")
  foreach(required IN ITEMS NAME MAX_LEN SOURCES SEEDS)
    if(NOT fuzz_${required})
      message(FATAL_ERROR "kvactor_fuzz: no ${required}")
    endif()
  endforeach()
  if(fuzz_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kvactor_fuzz: unknown arguments ${fuzz_UNPARSED_ARGUMENTS}")
  endif()
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
  # NOTE: a target's scratch files go to TMPDIR: here, not /tmp.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${BINARY_DIR}
                          ${fuzzer} -seed=1 -max_total_time=${SECONDS} -max_len=${fuzz_MAX_LEN}
                          -timeout=10 -artifact_prefix=${fuzzer}_ ${corpus}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${fuzz_NAME} failed (${rc}); see the output above. An input it "
                        "found is in ${fuzzer}_crash-* (or _leak-, _oom-, _timeout-): "
                        "${fuzzer} FILE runs it again.")
  endif()
endfunction()
