// CPU paged attention (generic and AVX-512 loops) against the reference, and
// the same through the device API.
#include <gtest/gtest.h>

#include <future>
#include <tuple>

#include "kernels/cpu/kernels.hpp"
#include "kernels/ops.hpp"
#include "tests/kernels/attention_problem.hpp"

namespace kvactor::kernels {
namespace {

using testing::attention_config;

void run_and_check(const attention_config& config, cpu::isa simd, thread_pool& pool) {
  SCOPED_TRACE(config.name() + " " + cpu::isa_name(simd));
  const auto problem = testing::make_attention_problem(config, 99);
  std::vector<uint8_t> out(problem.out_bytes());
  cpu::paged_attention(problem.params(out.data()), pool, simd);
  const auto actual =
    testing::to_floats(config.type, out.data(), out.size() / dtype_size(config.type));
  EXPECT_TRUE(
    testing::all_close(actual, problem.reference(), testing::attention_tolerance(config.type)));
}

// dtype, head_dim, block_size, GQA ratio, isa
using shape = std::tuple<dtype, int, int, int, cpu::isa>;

class cpu_attention : public ::testing::TestWithParam<shape> {
protected:
  void SetUp() override {
    if (static_cast<int>(std::get<4>(GetParam())) > static_cast<int>(cpu::best_isa()))
      GTEST_SKIP() << "this CPU lacks " << cpu::isa_name(std::get<4>(GetParam()))
                   << "; the generic loop is tested";
  }
  attention_config base() const {
    const auto [type, head_dim, block_size, ratio, simd] = GetParam();
    return testing::gqa_config(type, head_dim, block_size, ratio);
  }
  cpu::isa simd() const { return std::get<4>(GetParam()); }
  thread_pool pool_{2};
};

TEST_P(cpu_attention, decode_matches_reference) {
  attention_config c = base();
  const int bs = c.block_size;
  c.seq_lens = {1, bs - 1, bs, bs + 1, 300, 1000};
  run_and_check(c, simd(), pool_);
}

TEST_P(cpu_attention, prefill_and_extend_match_reference) {
  attention_config c = base();
  const int bs = c.block_size;
  c.seq_lens = {7, bs + 3, 261, 64};
  c.query_pad = 2 * c.num_kv_heads * c.head_dim;  // queries read in place from fused QKV rows
  c.query_lens = {7, 5, 2, 64};
  run_and_check(c, simd(), pool_);
}

std::string shape_name(const ::testing::TestParamInfo<shape>& info) {
  const auto [type, head_dim, block_size, ratio, simd] = info.param;
  return std::string(dtype_name(type)) + "_d" + std::to_string(head_dim) + "_bs" +
         std::to_string(block_size) + "_gqa" + std::to_string(ratio) + "_" + cpu::isa_name(simd);
}

INSTANTIATE_TEST_SUITE_P(all, cpu_attention,
                         ::testing::Combine(::testing::Values(dtype::f32, dtype::f16, dtype::bf16),
                                            ::testing::Values(64, 128),
                                            ::testing::Values(8, 16, 32), ::testing::Values(1, 4),
                                            ::testing::Values(cpu::isa::generic, cpu::isa::avx512,
                                                              cpu::isa::avx512_bf16)),
                         shape_name);

TEST(cpu_attention_other_head_dims, fall_back_or_specialise_correctly) {
  thread_pool pool(2);
  for (int head_dim : {32, 96, 256})
    for (cpu::isa simd : {cpu::isa::generic, cpu::best_isa()}) {
      attention_config c;
      c.type = dtype::f16;
      c.head_dim = head_dim;
      c.num_heads = 6;
      c.seq_lens = {3, 70};
      run_and_check(c, simd, pool);
    }
}

TEST(cpu_attention_device, runs_on_the_compute_stream_and_signals_completion) {
  auto dev = make_device("cpu", device_options{.num_threads = 2});
  ASSERT_TRUE(dev) << dev.error().message;
  attention_config c;
  c.type = dtype::bf16;
  c.head_dim = 128;
  c.num_heads = 8;
  c.seq_lens = {5, 40, 333};
  const auto problem = testing::make_attention_problem(c, 5);
  std::vector<uint8_t> out(problem.out_bytes());
  paged_attention(**dev, streams::compute, problem.params(out.data()));
  std::promise<void> called;
  const event_ptr done = (*dev)->record(streams::compute, [&] { called.set_value(); });
  ASSERT_EQ(called.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(done->ready());
  const auto actual = testing::to_floats(c.type, out.data(), out.size() / 2);
  EXPECT_TRUE(
    testing::all_close(actual, problem.reference(), testing::attention_tolerance(c.type)));
}

} // namespace
} // namespace kvactor::kernels
