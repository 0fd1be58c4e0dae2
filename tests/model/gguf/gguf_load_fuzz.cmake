# The GGUF loader's fuzz test (gguf_load_fuzz.cpp), seeded with small models
# that kvactor-make-tiny writes: Llama in F32 and Q8_0, Qwen2 (biases) in
# the K formats of a Q4_K_M file. Arguments: CLANGXX, SOURCE_DIR,
# BINARY_DIR, SECONDS, MAKE_TINY, and INCLUDES and LIBS (comma-separated:
# the generated headers' folder and CPython's, which the chat template
# code the loader links needs).
include(${SOURCE_DIR}/cmake/fuzzer.cmake)
set(seeds_dir ${BINARY_DIR}/gguf_load_fuzz_seeds)
file(REMOVE_RECURSE ${seeds_dir})
set(tiny --layers=1 --vocab=260 --context=64 --dtype=f32 --seed=1)
foreach(model IN ITEMS
        "llama --hidden=32 --heads=2 --kv-heads=1 --head-dim=16 --intermediate=32 --untied --gguf=f32,q8_0"
        "qwen2 --hidden=256 --heads=2 --kv-heads=1 --head-dim=64 --intermediate=256 --tied --gguf=q4_k_m")
  separate_arguments(args UNIX_COMMAND "${model}")
  list(POP_FRONT args style)
  execute_process(COMMAND ${MAKE_TINY} --out=${seeds_dir}/${style} --style=${style} ${tiny} ${args}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kvactor-make-tiny failed (${rc}) for ${model}")
  endif()
endforeach()
file(GLOB seeds ${seeds_dir}/*/*.gguf)
# NOTE: libFuzzer cuts longer inputs to -max_len: every seed whole.
set(max_len 0)
foreach(seed IN LISTS seeds)
  file(SIZE ${seed} size)
  if(size GREATER max_len)
    set(max_len ${size})
  endif()
endforeach()

set(s ${SOURCE_DIR})
file(GLOB sources ${s}/base/*.cpp ${s}/model/gguf/*.cpp ${s}/model/tokenizer/*.cpp
     ${s}/model/chat/*.cpp ${s}/model/grammar/*.cpp)
list(FILTER sources EXCLUDE REGEX "gguf_(writer|export)\\.cpp$")
string(REPLACE "," ";" includes "${INCLUDES}")
string(REPLACE "," ";" libs "${LIBS}")
kvactor_fuzz(NAME gguf_load_fuzz
  SOURCES ${sources} ${s}/model/model_folder.cpp ${s}/model/config.cpp ${s}/model/safetensors.cpp
          ${s}/model/weights.cpp ${s}/model/dtype.cpp ${s}/model/mapped_file.cpp
          ${s}/model/quant/quant_format.cpp ${s}/model/chat_template.cpp
          ${s}/tests/model/gguf/gguf_load_fuzz.cpp
  INCLUDES ${includes}
  LIBS ${libs}
  SEEDS ${seeds}
  MAX_LEN ${max_len})
