# Installs kvactor into a scratch prefix, builds tools/embed-example against
# the installed package (find_package(kvactor)) and runs it on the tiny model.
# Arguments: BUILD_DIR, SOURCE_DIR, MODEL_DIR.
set(prefix ${BUILD_DIR}/embed-check/prefix)
set(example ${BUILD_DIR}/embed-check/build)
file(REMOVE_RECURSE ${BUILD_DIR}/embed-check)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tools/embed-example -B ${example} -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${example})
run(${example}/kvactor-embed-example --model=${MODEL_DIR})
message("${output}")
foreach(expected "[alpha] done: max_tokens, 12 tokens" "[beta] done: max_tokens, 12 tokens"
                 "[gamma] done: aborted" "device blocks used 0" "invariants sound"
                 "kvactor shut down")
  string(FIND "${output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the example's output lacks \"${expected}\"")
  endif()
endforeach()
