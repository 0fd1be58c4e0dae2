# kvactor_target(<target>): C++20 and the project's warnings for host code.
# Warning flags apply to the CXX language only: nvcc rejects -Wall/-Werror.
function(kvactor_target target)
  set_target_properties(${target} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${KVACTOR_WERROR}>>:-Werror>)
endfunction()

# kvactor_test(<name> SOURCES ... LIBS ...): one GoogleTest binary, each test
# registered with ctest.
function(kvactor_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  kvactor_target(${name})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} GTest::gtest_main GTest::gmock)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60)
endfunction()
