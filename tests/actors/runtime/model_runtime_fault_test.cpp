// The runtime on the CUDA device when the device faults mid-generation,
// through the CUDA shim, which leaves the fault a kernel's illegal address
// leaves on a GPU: no host function runs any more, so no step completes.
// The device's watchdog reports it, and every request ends with it instead of
// waiting forever; a new request is refused with it; the runtime shuts down.

#include "actors/runtime/spawn.hpp"
#include "kernels/cuda_shim/shim.hpp"
#include "kvactor/kvactor.hpp"
#include "test_sink.hpp"
#include "tiny_serving.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kvactor {
namespace {

using testing::collector;
using testing::sink_fn;
using testing::test_config;
using testing::tokens;

TEST(model_runtime_fault, a_device_fault_mid_step_ends_every_request_with_its_name) {
  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  engine_config e;
  e.model_dir = testing::model_dir(64).string();
  e.device = "cuda";
  e.block_size = 16;
  auto rt = spawn_runtime(sys, e);
  ASSERT_TRUE(rt) << sys.render(rt.error());
  auto events = std::make_shared<collector>();
  auto sink = sys.spawn(sink_fn, events);
  auto submit = [&](int32_t seed) {
    generate_request req;
    req.prompt_tokens = tokens(20, seed);
    req.max_tokens = 400;
    req.ignore_eos = true;
    admission out;
    self->request(*rt, caf::infinite, generate_atom::value, req, sink)
      .receive([&](const admission& a) { out = a; },
               [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
    return out;
  };
  std::vector<request_id> ids;
  for (int32_t i = 0; i < 3; ++i)
    ids.push_back(submit(100 * i + 3).id);
  // Mid-generation: once the first request has streamed a few tokens.
  for (int i = 0; i < 6000; ++i) {
    {
      std::lock_guard lock(events->mutex);
      if (events->tokens[ids[0]].size() >= 3)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  cuda_shim::fault_at_task(cuda_shim::num_tasks_run() + 5);

  const std::string fault = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  for (request_id id : ids) {
    const done_event done = events->wait_done(id);
    EXPECT_EQ(done.finish_reason, finish_reason::error) << "request " << id;
    EXPECT_EQ(done.error_code, errc::device_unusable);
    EXPECT_EQ(done.error_message.rfind(fault, 0), 0u) << done.error_message;
    EXPECT_LT(done.tokens.size(), 400u);
  }
  const admission refused = submit(7);
  EXPECT_EQ(refused.error_code, errc::device_unusable);
  EXPECT_EQ(refused.error_message.rfind("the device failed: " + fault, 0), 0u)
    << refused.error_message;
  bool stopped = false;
  self->request(*rt, caf::infinite, shutdown_atom::value)
    .receive([&](bool ok) { stopped = ok; },
             [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
  EXPECT_TRUE(stopped);
  cuda_shim::clear_fault();
}

} // namespace
} // namespace kvactor
