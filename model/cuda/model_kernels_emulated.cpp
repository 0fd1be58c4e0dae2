// model_kernels.cu compiled by g++ for the CUDA shim (kernels/cuda_shim/):
// the same checks and grids, each launch running the kernel through the
// emulator on the shim stream. Linked only into programs that link the shim
// (tests), never with nvcc's model_kernels.cu object.
#include <cuda_runtime_api.h> // before the emulator: see kernels/emulator/emulator.hpp

#include "model/cuda/model_kernels.cu"
