# KVACTOR_CUDA=AUTO enables CUDA when nvcc is found, ON requires it, OFF skips it.
# Sets KVACTOR_HAVE_CUDA.
set(KVACTOR_HAVE_CUDA OFF)
if(NOT KVACTOR_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "KVACTOR_CUDA must be AUTO, ON or OFF, not '${KVACTOR_CUDA}'")
endif()
if(NOT KVACTOR_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    # NOTE: CMake defaults to the static runtime; linking CUDA::cudart as well
    # would put both on the link line.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(KVACTOR_HAVE_CUDA ON)
  elseif(KVACTOR_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KVACTOR_CUDA=ON but no CUDA compiler (nvcc) was found on PATH; "
                        "set CUDACXX or CMAKE_CUDA_COMPILER, or use KVACTOR_CUDA=AUTO/OFF")
  endif()
endif()
message(STATUS "kvactor: CUDA device ${KVACTOR_HAVE_CUDA}")
