# The constraint compilers' fuzz test (grammar_fuzz.cpp), seeded with the
# schemas of json_schemas/ and the regexes, GBNF grammar and tool-call
# specs of fuzz_corpus/. Arguments: CLANGXX, SOURCE_DIR, BINARY_DIR, SECONDS.
include(${SOURCE_DIR}/cmake/fuzzer.cmake)
set(s ${SOURCE_DIR})
file(GLOB sources ${s}/base/*.cpp ${s}/model/grammar/*.cpp)
# NOTE: masks over a vocabulary (token_*) need the tokenizer; the text
# grammars do not.
list(FILTER sources EXCLUDE REGEX "/token_[a-z]+\\.cpp$")
file(GLOB seeds ${s}/tests/model/grammar/json_schemas/* ${s}/tests/model/grammar/fuzz_corpus/*)
kvactor_fuzz(NAME grammar_fuzz
  SOURCES ${sources} ${s}/tests/model/grammar/grammar_fuzz.cpp
  LIBS -lsimdjson -lpcre2-8 -lutf8proc
  SEEDS ${seeds}
  MAX_LEN 4096)
