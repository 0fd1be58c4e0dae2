// The CUDA shim itself (kernels/cuda_shim/): stream order and concurrency,
// events, the rules it enforces (host functions, pageable async copies,
// kernel pointers, host access to device memory), error semantics (last
// error, sticky errors), cuBLAS products and the device's properties.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "kernels/cuda/launch.hpp"
#include "kernels/cuda_shim/shim.hpp"
#include "recorded_violations.hpp"

namespace kvactor::cuda_shim {
namespace {

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
  return p;
}
void* pinned_alloc(size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), cudaSuccess);
  return p;
}

// Stream a uploads `value` to dev; stream b downloads dev, after a's event
// when `wait`. Returns whether b saw the value.
bool b_sees_a(cudaStream_t a, cudaStream_t b, bool wait, int value) {
  constexpr size_t n = 1 << 16;
  static void* dev = device_alloc(n * sizeof(int));
  static auto* up = static_cast<int*>(pinned_alloc(n * sizeof(int)));
  static auto* down = static_cast<int*>(pinned_alloc(n * sizeof(int)));
  for (size_t i = 0; i < n; ++i) up[i] = value;
  cudaEvent_t e = nullptr;
  EXPECT_EQ(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(dev, up, n * sizeof(int), cudaMemcpyHostToDevice, a), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(e, a), cudaSuccess);
  if (wait) {
    EXPECT_EQ(cudaStreamWaitEvent(b, e, 0), cudaSuccess);
  }
  EXPECT_EQ(cudaMemcpyAsync(down, dev, n * sizeof(int), cudaMemcpyDeviceToHost, b), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(b), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(a), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(e), cudaSuccess);
  return down[0] == value && down[n - 1] == value;
}

class cuda_shim_test : public ::testing::Test {
protected:
  void SetUp() override {
    set_settings(settings{.seed = 7, .max_delay_us = 2000});
    CHECK_CUDA(cudaStreamCreateWithFlags(&a_, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&b_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    EXPECT_EQ(cudaStreamDestroy(a_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(b_), cudaSuccess);
  }
  cudaStream_t a_ = nullptr, b_ = nullptr;
};

TEST_F(cuda_shim_test, a_missing_event_wait_between_streams_reads_stale_data) {
  int num_stale = 0;
  for (int trial = 1; trial <= 40 && num_stale == 0; ++trial)
    num_stale += b_sees_a(a_, b_, false, trial) ? 0 : 1;
  EXPECT_GT(num_stale, 0) << "stream b never ran ahead of stream a in 40 trials";
}

TEST_F(cuda_shim_test, an_event_wait_orders_the_streams) {
  for (int trial = 1; trial <= 20; ++trial)
    EXPECT_TRUE(b_sees_a(a_, b_, true, 1000 + trial)) << "trial " << trial;
}

// A pinned buffer rewritten right after its async copy was enqueued: the
// copy reads it when the stream gets there, so the device sees the second
// value sooner or later (on hardware too).
TEST_F(cuda_shim_test, a_host_buffer_reused_before_its_copy_ran_is_seen) {
  constexpr size_t n = 1 << 14;
  auto* host = static_cast<int*>(pinned_alloc(n * sizeof(int)));
  auto* back = static_cast<int*>(pinned_alloc(n * sizeof(int)));
  void* dev = device_alloc(n * sizeof(int));
  int num_late = 0;
  for (int trial = 0; trial < 40 && num_late == 0; ++trial) {
    std::fill(host, host + n, 1);
    CHECK_CUDA(cudaMemcpyAsync(dev, host, n * sizeof(int), cudaMemcpyHostToDevice, a_));
    std::fill(host, host + n, 2); // too early: the copy may not have run
    CHECK_CUDA(cudaMemcpyAsync(back, dev, n * sizeof(int), cudaMemcpyDeviceToHost, a_));
    CHECK_CUDA(cudaStreamSynchronize(a_));
    num_late += back[0] == 2 ? 1 : 0;
  }
  EXPECT_GT(num_late, 0) << "the copy always ran before the host rewrote its source";
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(host), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(back), cudaSuccess);
}

TEST_F(cuda_shim_test, event_query_follows_the_stream) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto* gate = new std::shared_future<void>(released);
  CHECK_CUDA(cudaLaunchHostFunc(
    a_,
    [](void* p) {
      static_cast<std::shared_future<void>*>(p)->wait();
      delete static_cast<std::shared_future<void>*>(p);
    },
    gate));
  cudaEvent_t e = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  EXPECT_EQ(cudaEventQuery(e), cudaSuccess); // never recorded
  CHECK_CUDA(cudaEventRecord(e, a_));
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess); // not-ready is not an error
  CHECK_CUDA(cudaStreamWaitEvent(b_, e, 0));
  CHECK_CUDA(cudaEventDestroy(e)); // pending: the wait still holds it
  release.set_value();
  CHECK_CUDA(cudaStreamSynchronize(b_));
  EXPECT_EQ(cudaEventQuery(e), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// Stream capture: the device work is recorded, not run; each launch of the
// graph runs it with the arguments it was captured with.
TEST_F(cuda_shim_test, a_captured_graph_runs_when_launched) {
  constexpr size_t n = 256;
  auto* up = static_cast<int*>(pinned_alloc(n * sizeof(int)));
  auto* down = static_cast<int*>(pinned_alloc(n * sizeof(int)));
  void* dev = device_alloc(n * sizeof(int));
  std::fill(up, up + n, 1);
  std::fill(down, down + n, 0);
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(a_, cudaStreamCaptureModeThreadLocal));
  CHECK_CUDA(cudaMemcpyAsync(dev, up, n * sizeof(int), cudaMemcpyHostToDevice, a_));
  CHECK_CUDA(cudaMemcpyAsync(down, dev, n * sizeof(int), cudaMemcpyDeviceToHost, a_));
  CHECK_CUDA(cudaStreamEndCapture(a_, &graph));
  CHECK_CUDA(cudaStreamSynchronize(a_));
  EXPECT_EQ(down[n - 1], 0) << "ran at capture";
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaGraphLaunch(exec, b_));
  CHECK_CUDA(cudaStreamSynchronize(b_));
  EXPECT_EQ(down[n - 1], 1);
  std::fill(up, up + n, 2);
  CHECK_CUDA(cudaGraphLaunch(exec, a_));
  CHECK_CUDA(cudaStreamSynchronize(a_));
  EXPECT_EQ(down[0], 2);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaFree(dev));
  CHECK_CUDA(cudaFreeHost(up));
  CHECK_CUDA(cudaFreeHost(down));
}

// As on a GPU: a query (or synchronize, event, host function) of a
// capturing stream is refused and breaks the capture; the stream works on.
TEST_F(cuda_shim_test, a_query_of_a_capturing_stream_breaks_the_capture) {
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(a_, cudaStreamCaptureModeThreadLocal));
  EXPECT_EQ(cudaStreamBeginCapture(a_, cudaStreamCaptureModeThreadLocal), cudaErrorIllegalState);
  EXPECT_EQ(cudaStreamQuery(a_), cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(cudaStreamEndCapture(a_, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  (void)cudaGetLastError();
  EXPECT_TRUE(b_sees_a(a_, b_, true, 5));
}

TEST_F(cuda_shim_test, a_host_function_calling_cuda_is_a_violation) {
  recorded_violations v;
  std::promise<cudaError_t> result;
  CHECK_CUDA(cudaLaunchHostFunc(
      a_,
      [](void* p) {
        int n = 0;
        static_cast<std::promise<cudaError_t>*>(p)->set_value(cudaGetDeviceCount(&n));
      },
      &result));
  EXPECT_EQ(result.get_future().get(), cudaErrorNotPermitted);
  CHECK_CUDA(cudaStreamSynchronize(a_));
  ASSERT_EQ(v.messages().size(), 1u);
  EXPECT_NE(v.messages()[0].find("cudaGetDeviceCount called from a host function"),
            std::string::npos)
    << v.messages()[0];
}

TEST_F(cuda_shim_test, a_pageable_buffer_in_an_async_copy_is_a_violation) {
  recorded_violations v;
  std::vector<char> pageable(4096, 1);
  void* dev = device_alloc(4096);
  EXPECT_EQ(cudaMemcpyAsync(dev, pageable.data(), 4096, cudaMemcpyHostToDevice, a_),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(pageable.data(), dev, 4096, cudaMemcpyDefault, a_),
            cudaErrorInvalidValue);
  ASSERT_EQ(v.messages().size(), 2u);
  EXPECT_NE(v.messages()[0].find("pageable host memory"), std::string::npos) << v.messages()[0];
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  // The synchronous copy takes pageable memory, as CUDA's does.
  EXPECT_EQ(cudaMemcpy(dev, pageable.data(), 4096, cudaMemcpyHostToDevice), cudaSuccess);
  // wrong way
  EXPECT_EQ(cudaMemcpy(dev, pageable.data(), 4096, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  // past the end
  EXPECT_EQ(cudaMemcpy(pageable.data(), dev, 8192, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(v.messages().size(), 4u);
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
  // freed
  EXPECT_EQ(cudaMemcpy(pageable.data(), dev, 16, cudaMemcpyDefault), cudaErrorInvalidValue);
  ASSERT_EQ(v.messages().size(), 5u);
  EXPECT_NE(v.messages()[4].find("not allocated"), std::string::npos) << v.messages()[4];
  (void)cudaGetLastError();
}

TEST_F(cuda_shim_test, launch_errors_are_not_sticky) {
  // 70000 layers: grid.y = 140000 > 65535.
  void* cache = device_alloc(4096);
  void* pairs = device_alloc(64);
  const kernels::copy_blocks_params p{cache, static_cast<const int32_t*>(pairs), 1, 70000, 1, 16};
  EXPECT_EQ(kernels::cuda_launch::copy_blocks(p, a_), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess); // the launcher's cudaGetLastError took it
  int n = 0;
  EXPECT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_EQ(cudaSetDevice(3), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorIllegalAddress),
               "an illegal memory access was encountered");
  EXPECT_EQ(cudaFree(cache), cudaSuccess);
  EXPECT_EQ(cudaFree(pairs), cudaSuccess);
}

// A kernel handed pageable memory: the violation, then the sticky error on
// every call; exits 0 when all of it holds.
[[noreturn]] void fault_with_a_pageable_kernel_argument() {
  recorded_violations v;
  cudaStream_t s = nullptr;
  (void)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::vector<int32_t> pairs{0, 1}; // host memory, as a kernel argument
  void* cache = device_alloc(2 * 2 * 4096);
  const kernels::copy_blocks_params p{cache, pairs.data(), 1, 1, 2, 4096};
  const bool launch_failed = kernels::cuda_launch::copy_blocks(p, s) == cudaErrorIllegalAddress;
  const bool sticky = cudaGetLastError() == cudaErrorIllegalAddress &&
                      cudaGetLastError() == cudaErrorIllegalAddress &&
                      cudaMalloc(&cache, 16) == cudaErrorIllegalAddress;
  const bool named =
    v.messages().size() == 1 &&
    v.messages()[0].find("copy_blocks_params::pairs points to") != std::string::npos;
  std::exit(launch_failed && sticky && named ? 0 : 1);
}

// In a child process: the error never clears.
TEST_F(cuda_shim_test, a_kernel_reading_pageable_memory_leaves_a_sticky_error) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(fault_with_a_pageable_kernel_argument(), ::testing::ExitedWithCode(0), "");
}

TEST_F(cuda_shim_test, host_code_touching_device_memory_dies) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* p = static_cast<volatile int*>(device_alloc(4096));
        (void)*p;
      },
      "host code touched device memory");
}

TEST_F(cuda_shim_test, gemm_runs_on_the_handle_stream) {
  // C[m, n] = A^T B with A: [k, m] and B: [k, n], column-major.
  const int m = 5, n = 3, k = 7;
  auto* host = static_cast<float*>(pinned_alloc((k * m + k * n + m * n) * sizeof(float)));
  for (int i = 0; i < k * m + k * n; ++i) host[i] = static_cast<float>(i % 11) - 5.0f;
  auto* dev = static_cast<float*>(device_alloc((k * m + k * n + m * n) * sizeof(float)));
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(h, a_), CUBLAS_STATUS_SUCCESS);
  CHECK_CUDA(
    cudaMemcpyAsync(dev, host, (k * m + k * n) * sizeof(float), cudaMemcpyHostToDevice, a_));
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_EQ(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, dev, CUDA_R_32F, k,
                         dev + k * m, CUDA_R_32F, k, &beta, dev + k * m + k * n, CUDA_R_32F, m,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  float* out = host + k * m + k * n;
  CHECK_CUDA(
    cudaMemcpyAsync(out, dev + k * m + k * n, m * n * sizeof(float), cudaMemcpyDeviceToHost, a_));
  CHECK_CUDA(cudaStreamSynchronize(a_));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0;
      for (int l = 0; l < k; ++l) want += host[i * k + l] * host[k * m + j * k + l];
      EXPECT_EQ(out[j * m + i], want) << i << "," << j;
    }
  {
    recorded_violations v;
    EXPECT_EQ(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, host, CUDA_R_32F, m, dev,
                           CUDA_R_32F, k, &beta, dev, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(v.messages().size(), 1u); // A in host memory
  }
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(host), cudaSuccess);
}

TEST(cuda_shim, one_h100) {
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_EQ(n, 1);
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  EXPECT_EQ(p.multiProcessorCount, 132);
  EXPECT_EQ(p.sharedMemPerBlock, 48u * 1024);
  EXPECT_EQ(p.maxGridSize[1], 65535);
  EXPECT_NE(std::string(p.name).find("H100"), std::string::npos);
  size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  EXPECT_EQ(total, size_t{80} << 30);
  EXPECT_LE(free, total);
}

} // namespace
} // namespace kvactor::cuda_shim
