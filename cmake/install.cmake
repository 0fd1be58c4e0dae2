# `cmake --install` puts the libraries, the public header kvactor/kvactor.hpp
# and a CMake package in place, so that a host application does
#   find_package(kvactor REQUIRED)
#   target_link_libraries(app PRIVATE kvactor::kvactor)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(kvactor_actors PROPERTIES EXPORT_NAME kvactor)
set(kvactor_installed kvactor_actors kvactor_requests kvactor_runner kvactor_core kvactor_model kvactor_kernels kvactor_base)
if(KVACTOR_HAVE_CUDA)
  list(APPEND kvactor_installed kvactor_kernels_cuda kvactor_model_cuda)
endif()
install(TARGETS ${kvactor_installed} EXPORT kvactorTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/actors/api/kvactor/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvactor
        FILES_MATCHING PATTERN "*.hpp")

set(kvactor_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kvactor)
install(EXPORT kvactorTargets NAMESPACE kvactor:: DESTINATION ${kvactor_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kvactorConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kvactorConfig.cmake
                              INSTALL_DESTINATION ${kvactor_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kvactorConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kvactorConfig.cmake
              ${PROJECT_BINARY_DIR}/kvactorConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/caf.cmake
              ${PROJECT_SOURCE_DIR}/cmake/utf8proc.cmake
              ${PROJECT_SOURCE_DIR}/cmake/pkg_config_libraries.cmake
        DESTINATION ${kvactor_cmake_dir})
