# cmake -DNVCC=... -DARCH=90 -DSOURCE=kernels.cu -DINCLUDE=<repo> -DOUT=x.o -P check_spills.cmake
# Compiles SOURCE for sm_ARCH with ptxas -v and fails on any kernel that
# spills registers (non-zero spill stores or loads) or on no kernel at all.
execute_process(
  COMMAND ${NVCC} -std=c++17 -O3 -I${INCLUDE} --generate-code=arch=compute_${ARCH},code=sm_${ARCH}
          -Xptxas=-v -c ${SOURCE} -o ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(log "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed (${rc}):\n${log}")
endif()
string(REGEX MATCHALL "Compiling entry function '[^']+'" kernels "${log}")
list(LENGTH kernels num_kernels)
if(num_kernels EQUAL 0)
  message(FATAL_ERROR "no kernel found in the ptxas output:\n${log}")
endif()
string(REGEX MATCHALL "[0-9]+ bytes spill stores, [0-9]+ bytes spill loads" spills "${log}")
foreach(s IN LISTS spills)
  if(NOT s MATCHES "^0 bytes spill stores, 0 bytes spill loads$")
    message(FATAL_ERROR "register spill on sm_${ARCH}: ${s}\n${log}")
  endif()
endforeach()
message(STATUS "sm_${ARCH}: ${num_kernels} kernels, no spills")
