#pragma once
// enqueue_host_task: a host function in a CUDA stream's order. It runs on a
// CUDA runtime thread once the stream has run everything before it, and the
// stream runs nothing after it until it returns. It must not call CUDA and
// should be short (the stream waits). An exception escaping it is fatal
// with a message: it must not cross the CUDA runtime.

#include <cuda_runtime_api.h>

#include <functional>

#include "base/result.hpp"

namespace kvactor::model {

status enqueue_host_task(cudaStream_t stream, std::function<void()> task);

} // namespace kvactor::model
