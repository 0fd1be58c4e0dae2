# kvactor_target(<target>): C++20 and the project's warnings for host code.
# Warning flags apply to the CXX language only: nvcc rejects -Wall/-Werror.
function(kvactor_target target)
  set_target_properties(${target} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${KVACTOR_WERROR}>>:-Werror>)
endfunction()

# kvactor_test(<name> [CUDA_SHIM] SOURCES ... LIBS ... [PROPERTIES ...]): one
# GoogleTest binary, each test registered with ctest (with these ctest
# properties). CUDA_SHIM (CUDA builds): the
# binary links the CUDA shim and the emulated launchers instead of libcudart,
# libcublas and nvcc's kernels (kernels/README.md), defines
# KVACTOR_CUDA_SHIM=1, and its ctest names start with "shim.". A binary
# whose name holds "cuda" gets a ctest TIMEOUT of 300 s per test, so that a
# device that hangs fails the test instead of stalling the suite.
function(kvactor_test name)
  cmake_parse_arguments(arg "CUDA_SHIM" "" "SOURCES;LIBS;PROPERTIES" ${ARGN})
  set(properties PROPERTIES ${arg_PROPERTIES})
  if(name MATCHES "cuda")
    list(APPEND properties TIMEOUT 300)
  endif()
  add_executable(${name} ${arg_SOURCES})
  kvactor_target(${name})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} GTest::gtest_main GTest::gmock)
  if(arg_CUDA_SHIM)
    set_target_properties(${name} PROPERTIES KVACTOR_CUDA_SHIM ON)
    target_compile_definitions(${name} PRIVATE KVACTOR_CUDA_SHIM=1)
    target_link_libraries(${name} PRIVATE kvactor_cuda_shim)
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 TEST_PREFIX "shim."
                         ${properties})
  else()
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 ${properties})
  endif()
endfunction()
