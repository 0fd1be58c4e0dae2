# Builds the line-protocol fuzzer with clang (libFuzzer + AddressSanitizer +
# UndefinedBehaviorSanitizer) and runs it for a bounded time from the seed
# corpus. Arguments: CLANGXX, SOURCE_DIR, BINARY_DIR, SECONDS.
set(fuzzer ${BINARY_DIR}/line_protocol_fuzz)
execute_process(
  COMMAND ${CLANGXX} -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined -I${SOURCE_DIR} -I${SOURCE_DIR}/actors/api
          ${SOURCE_DIR}/net/line_protocol.cpp ${SOURCE_DIR}/actors/requests/request_fields.cpp
          ${SOURCE_DIR}/actors/api/errors.cpp
          ${SOURCE_DIR}/net/json_writer.cpp ${SOURCE_DIR}/net/numeric_fields.cpp
          ${SOURCE_DIR}/net/token_fields.cpp ${SOURCE_DIR}/net/request_defaults.cpp
          ${SOURCE_DIR}/net/constraint_fields.cpp
          ${SOURCE_DIR}/net/client.cpp ${SOURCE_DIR}/base/json.cpp ${SOURCE_DIR}/base/utf8.cpp
          ${SOURCE_DIR}/tests/net/line_protocol_fuzz.cpp
          -lsimdjson -lcaf_core -lpthread -o ${fuzzer}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzzer failed (${rc})")
endif()
set(corpus ${BINARY_DIR}/line_protocol_corpus)
file(MAKE_DIRECTORY ${corpus})
file(GLOB seeds ${SOURCE_DIR}/tests/net/fuzz_corpus/*)
file(COPY ${seeds} DESTINATION ${corpus})
execute_process(COMMAND ${fuzzer} -seed=1 -max_total_time=${SECONDS} -max_len=4096 ${corpus}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the fuzzer found a failure (${rc}); see the output above")
endif()
