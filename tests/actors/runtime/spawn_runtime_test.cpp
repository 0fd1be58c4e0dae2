// spawn_runtime's refusals (actors/runtime/spawn_runtime.cpp): the engine configuration
// against the tiny model.

#include "kvactor/kvactor.hpp"
#include "test_sink.hpp"
#include "tiny_serving.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace kvactor {
namespace {

using ::testing::HasSubstr;
using testing::model_dir;
using testing::test_config;

// Each bad setting alone, on an otherwise good configuration: refused with
// its code and a message naming it.
TEST(spawn_runtime, refuses_each_bad_setting_with_its_code_and_names_it) {
  test_config cfg;
  caf::actor_system sys{cfg};
  struct bad {
    std::function<void(engine_config&)> change;
    errc code;
    std::string named;
  };
  const std::vector<bad> cases{
    {[](engine_config& e) { e.model_dir = "/nonexistent/kvactor-model"; }, errc::bad_model,
     "/nonexistent/kvactor-model"},
    {[](engine_config& e) {
       e.activations = number_format::bf16;
       e.weights = number_format::f32;
     },
     errc::invalid_config, "weights 'f32' with activations 'bf16'"},
    {[](engine_config& e) { e.kv_dtype = number_format::q8_0; }, errc::invalid_config,
     "kv_dtype 'q8_0': q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl and "
     "iq4_xs are formats of weights"},
    {[](engine_config& e) {
       e.weights = number_format::q4_0;
       e.activations = number_format::bf16;
     },
     errc::invalid_config, "weights 'q4_0' with activations 'bf16'"},
    {[](engine_config& e) { e.max_num_seqs = 0; }, errc::invalid_config, "max_num_seqs"},
    {[](engine_config& e) { e.block_size = -4; }, errc::invalid_config, "block_size -4"},
    {[](engine_config& e) { e.max_model_len = 1 << 30; }, errc::invalid_config, "max_model_len"},
    {[](engine_config& e) { e.kv_cache_bytes = 100; }, errc::invalid_config, "holds no KV block"},
    {[](engine_config& e) { e.gpu_memory_utilization = 1.5; }, errc::invalid_config,
     "gpu_memory_utilization 1.500000 is outside (0, 1]"},
    {[](engine_config& e) { e.gpu_memory_utilization = 0; }, errc::invalid_config,
     "gpu_memory_utilization 0.000000 is outside (0, 1]"},
    // Without a GPU (or CUDA in the build): no device. With one: this
    // model's head_dim of 32, which the CUDA attention does not take. A
    // clear error naming cuda either way.
    {[](engine_config& e) {
       e.kv_cache_bytes = 1 << 20;
       e.device = "cuda";
     },
     errc::device_unusable, "cuda"},
  };
  for (const bad& c : cases) {
    engine_config e;
    e.model_dir = model_dir().string();
    c.change(e);
    auto r = spawn_runtime(sys, e);
    ASSERT_FALSE(r) << c.named;
    EXPECT_EQ(code_of(r.error()), c.code) << c.named;
    EXPECT_THAT(sys.render(r.error()), HasSubstr(std::string(to_string(c.code)) + ": "));
    EXPECT_THAT(sys.render(r.error()), HasSubstr(c.named));
  }
}

} // namespace
} // namespace kvactor
