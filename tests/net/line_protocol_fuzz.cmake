# The line-protocol parser's fuzz test (line_protocol_fuzz.cpp), seeded from
# fuzz_corpus/. Arguments: CLANGXX, SOURCE_DIR, BINARY_DIR, SECONDS.
include(${SOURCE_DIR}/cmake/fuzzer.cmake)
set(s ${SOURCE_DIR})
file(GLOB seeds ${s}/tests/net/fuzz_corpus/*)
kvactor_fuzz(NAME line_protocol_fuzz
  SOURCES ${s}/net/line_protocol.cpp ${s}/actors/requests/request_fields.cpp
          ${s}/actors/api/errors.cpp ${s}/net/json_writer.cpp ${s}/net/numeric_fields.cpp
          ${s}/net/token_fields.cpp ${s}/net/request_defaults.cpp ${s}/net/constraint_fields.cpp
          ${s}/net/client.cpp ${s}/base/json.cpp ${s}/base/utf8.cpp
          ${s}/tests/net/line_protocol_fuzz.cpp
  INCLUDES ${s}/actors/api
  LIBS -lsimdjson -lcaf_core
  SEEDS ${seeds}
  MAX_LEN 4096)
