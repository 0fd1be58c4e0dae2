#include "model/cuda/host_task.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#include "model/cuda/cuda_check.hpp"

namespace kvactor::model {
namespace {

void run_task(void* data) noexcept {
  const std::unique_ptr<std::function<void()>> task(static_cast<std::function<void()>*>(data));
  try {
    (*task)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvactor: exception in a CUDA stream callback: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "kvactor: exception in a CUDA stream callback\n");
    std::abort();
  }
}

} // namespace

status enqueue_host_task(cudaStream_t stream, std::function<void()> task) {
  auto owned = std::make_unique<std::function<void()>>(std::move(task));
  KVACTOR_CUDA_TRY(cudaLaunchHostFunc(stream, run_task, owned.get()));
  (void)owned.release(); // run_task owns it now
  return {};
}

} // namespace kvactor::model
