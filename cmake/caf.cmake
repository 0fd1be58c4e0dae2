# CAF 0.17 (Debian's libcaf-dev) ships neither a CMake package nor a .pc
# file: caf::core and caf::io are imported here. Used by the build and by the
# installed kvactorConfig.cmake.
find_package(Threads REQUIRED)
find_path(CAF_INCLUDE_DIR caf/all.hpp)
find_library(CAF_CORE_LIBRARY caf_core)
find_library(CAF_IO_LIBRARY caf_io)
find_library(CAF_OPENSSL_LIBRARY caf_openssl)
if(NOT CAF_INCLUDE_DIR OR NOT CAF_CORE_LIBRARY OR NOT CAF_IO_LIBRARY)
  message(FATAL_ERROR "CAF 0.17 not found (Debian package libcaf-dev); run tools/bootstrap")
endif()
if(NOT TARGET caf::core)
  add_library(caf::core SHARED IMPORTED)
  set_target_properties(caf::core PROPERTIES IMPORTED_LOCATION ${CAF_CORE_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
                        INTERFACE_LINK_LIBRARIES Threads::Threads)
  add_library(caf::io SHARED IMPORTED)
  set_target_properties(caf::io PROPERTIES IMPORTED_LOCATION ${CAF_IO_LIBRARY}
                        INTERFACE_LINK_LIBRARIES caf::core)
endif()
# CAF's OpenSSL module (libcaf-openssl0.17, a dependency of libcaf-dev): TLS
# between a front and its workers.
if(CAF_OPENSSL_LIBRARY AND NOT TARGET caf::openssl)
  add_library(caf::openssl SHARED IMPORTED)
  set_target_properties(caf::openssl PROPERTIES IMPORTED_LOCATION ${CAF_OPENSSL_LIBRARY}
                        INTERFACE_LINK_LIBRARIES caf::io)
endif()
# libssl itself: cluster/openssl_errors.cpp interposes four of its calls.
find_package(OpenSSL REQUIRED)

