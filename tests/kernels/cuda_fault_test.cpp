// cuda_device when the device faults: the watchdog reports the fault
// within its interval instead of the completions never coming, and the
// device then refuses work and shuts down without aborting. On a GPU a
// kernel writes to an address no allocation holds; through the CUDA shim,
// which cannot run that, the shim injects the fault it leaves.
// NOTE: a binary of its own: on a GPU the fault ends the process's context,
// and every CUDA call after it fails.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda_device.hpp"
#include "kernels/ops.hpp"
#include "tests/kernels/device_copy.hpp"
#if KVACTOR_CUDA_SHIM
#include "kernels/cuda_shim/shim.hpp"
#endif

namespace kvactor::kernels {
namespace {

class cuda_fault : public ::testing::Test {
protected:
  void SetUp() override {
    auto d = make_device("cuda");
    if (!d) {
      const char* required = std::getenv("KVACTOR_REQUIRE_GPU");
      if (required != nullptr && std::strcmp(required, "1") == 0)
        FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << d.error().message;
      GTEST_SKIP() << d.error().message;
    }
    dev_ = std::move(*d);
  }
  void TearDown() override {
    dev_.reset();
#if KVACTOR_CUDA_SHIM
    cuda_shim::clear_fault();
#endif
  }
  std::unique_ptr<device> dev_;
};

#if !KVACTOR_CUDA_SHIM
// A real fault: copy_blocks told the cache is at address 0x100, which no
// allocation holds. The launch succeeds; the kernel's fault comes later.
TEST_F(cuda_fault, a_kernel_that_faults_is_reported_and_its_completion_never_runs) {
  std::promise<std::string> fault;
  dev_->set_fault_handler([&](const std::string& what) { fault.set_value(what); });
  const std::vector<int32_t> pairs{0, 1};
  auto d_pairs = dev_->allocate(memory_kind::device, sizeof(int32_t) * pairs.size());
  ASSERT_TRUE(d_pairs.has_value());
  testing::copy_to_device(*dev_, streams::compute, d_pairs->data(), pairs.data(),
                          sizeof(int32_t) * pairs.size());
  copy_blocks(*dev_, streams::compute,
              copy_blocks_params{reinterpret_cast<void*>(0x100),
                                 static_cast<const int32_t*>(d_pairs->data()), 1, 1, 4, 4096});
  bool ran = false;
  (void)dev_->record(streams::compute, [&] { ran = true; });
  auto reported = fault.get_future();
  ASSERT_EQ(reported.wait_for(std::chrono::seconds(30)), std::future_status::ready)
    << "the watchdog never reported the fault";
  EXPECT_EQ(reported.get().rfind("cudaErrorIllegalAddress", 0), 0u);
  EXPECT_FALSE(ran);
  d_pairs.reset();
  dev_->synchronize();
}
#else

TEST_F(cuda_fault, a_fault_mid_stream_reaches_the_handler_and_no_completion_runs) {
  std::promise<std::string> fault;
  int faults = 0;
  dev_->set_fault_handler([&](const std::string& what) {
    if (++faults == 1) fault.set_value(what);
  });
  auto src = dev_->allocate(memory_kind::pinned_host, 4096);
  auto dst = dev_->allocate(memory_kind::device, 4096);
  ASSERT_TRUE(src && dst);
  // A step that completes, then one whose copy faults.
  std::promise<void> first;
  (void)dev_->record(streams::compute, [&] { first.set_value(); });
  ASSERT_EQ(first.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  bool second_ran = false;
  cuda_shim::fault_at_task(cuda_shim::num_tasks_run() + 1);
  dev_->copy_async(streams::compute, dst->data(), src->data(), 4096);
  (void)dev_->record(streams::compute, [&] { second_ran = true; });

  auto reported = fault.get_future();
  ASSERT_EQ(reported.wait_for(std::chrono::seconds(30)), std::future_status::ready)
    << "the watchdog never reported the fault";
  EXPECT_EQ(reported.get(), "cudaErrorIllegalAddress: an illegal memory access was encountered");
  EXPECT_FALSE(second_ran);
  auto* cuda = dynamic_cast<cuda_device*>(dev_.get());
  ASSERT_NE(cuda, nullptr);
  EXPECT_TRUE(cuda->faulted());

  // From the fault on: no new memory, enqueues do nothing, nothing aborts,
  // and the handler heard of the fault once.
  EXPECT_FALSE(dev_->allocate(memory_kind::device, 4096).has_value());
  bool late_ran = false;
  dev_->copy_async(streams::swap_out, src->data(), dst->data(), 4096);
  (void)dev_->record(streams::swap_out, [&] { late_ran = true; });
  dev_->synchronize();
  src.reset();
  dst.reset();
  dev_.reset();
  EXPECT_FALSE(late_ran);
  EXPECT_EQ(faults, 1);
}

// A fault with no completion outstanding is noticed by the next call that
// fails, with the call named. NOTE: the test waits for the fault to have
// happened, so that the next call is synchronize()'s first (cudaSetDevice);
// without the wait, it is cudaSetDevice or cudaStreamSynchronize depending
// on when the stream's thread runs the copy.
TEST_F(cuda_fault, a_failing_enqueue_reports_the_fault_with_the_call) {
  std::string what;
  dev_->set_fault_handler([&](const std::string& w) { what = w; });
  auto src = dev_->allocate(memory_kind::pinned_host, 64);
  auto dst = dev_->allocate(memory_kind::device, 64);
  ASSERT_TRUE(src && dst);
  cuda_shim::fault_at_task(cuda_shim::num_tasks_run() + 1);
  dev_->copy_async(streams::compute, dst->data(), src->data(), 64);
  for (int i = 0; i < 10000 && cudaPeekAtLastError() == cudaSuccess; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(cudaPeekAtLastError(), cudaErrorIllegalAddress);
  EXPECT_TRUE(what.empty()); // noticed by no call yet
  dev_->synchronize();
  EXPECT_EQ(what, "cudaErrorIllegalAddress: an illegal memory access was encountered "
                  "(cudaSetDevice)");
}

#endif

} // namespace
} // namespace kvactor::kernels
