# Every dependency comes from Debian's packages; tools/bootstrap installs them.
find_package(Threads REQUIRED)

include(${CMAKE_CURRENT_LIST_DIR}/caf.cmake)

find_package(Boost 1.74 REQUIRED CONFIG)
find_package(simdjson 3 CONFIG REQUIRED)
include(${CMAKE_CURRENT_LIST_DIR}/utf8proc.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/pkg_config_libraries.cmake)
# OpenBLAS: the tests' reference for the cuBLAS calls of the CUDA forward
# pass (the CPU forward pass has its own products).
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)

if(KVACTOR_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(KVACTOR_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
