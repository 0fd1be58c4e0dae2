// The real CUDA kernels and cuda_device on a GPU, against the same reference
// as the emulated tests. Skipped without a GPU; failing instead when
// KVACTOR_REQUIRE_GPU=1 (GPU CI).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <variant>

#include "kernels/cuda/launch.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/ops.hpp"
#include "tests/kernels/attention_problem.hpp"
#include "tests/kernels/device_copy.hpp"

namespace kvactor::kernels {
namespace {

using testing::attention_config;

bool gpu_required() {
  const char* v = std::getenv("KVACTOR_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

class cuda_test : public ::testing::Test {
protected:
  void SetUp() override {
    auto d = make_device("cuda");
    if (!d) {
      if (gpu_required()) FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << d.error().message;
      GTEST_SKIP() << d.error().message;
    }
    dev_ = std::move(*d);
  }

  buffer upload(const void* data, size_t bytes) {
    auto b = dev_->allocate(memory_kind::device, std::max<size_t>(bytes, 16));
    KVACTOR_ASSERT(b.has_value(), "test allocation");
    testing::copy_to_device(*dev_, streams::compute, b->data(), data, bytes);
    return std::move(*b);
  }
  template <class T>
  buffer upload(const std::vector<T>& v) {
    return upload(v.data(), v.size() * sizeof(T));
  }
  std::vector<uint8_t> download(const buffer& b, size_t bytes) {
    std::vector<uint8_t> host(bytes);
    testing::copy_to_host(*dev_, streams::compute, host.data(), b.data(), bytes);
    return host;
  }

  // split: decode with the device's split-K workspace; the launcher must
  // then split (the config's contexts are long enough).
  void check_attention(const attention_config& config, bool split = false) {
    SCOPED_TRACE(config.name());
    const auto pr = testing::make_attention_problem(config, 4321);
    buffer k = upload(pr.k_cache), v = upload(pr.v_cache), q = upload(pr.query);
    buffer tables = upload(pr.block_tables), lens = upload(pr.seq_lens),
           qsl = upload(pr.query_start_loc);
    buffer out = std::move(*dev_->allocate(memory_kind::device, pr.out_bytes()));
    paged_attention_params p = pr.params(out.data());
    p.query = q.data();
    p.k_cache = k.data();
    p.v_cache = v.data();
    p.block_tables = static_cast<const int32_t*>(tables.data());
    p.seq_lens = static_cast<const int32_t*>(lens.data());
    p.query_start_loc =
      pr.query_start_loc.empty() ? nullptr : static_cast<const int32_t*>(qsl.data());
    if (split) {
      p.workspace = dev_->split_workspace(streams::compute);
      EXPECT_GT(cuda_launch::attention_split_of(p).num_splits, 1);
    }
    paged_attention(*dev_, streams::compute, p);
    const auto host = download(out, pr.out_bytes());
    const auto actual =
      testing::to_floats(config.type, host.data(), pr.out_bytes() / dtype_size(config.type));
    EXPECT_TRUE(
      testing::all_close(actual, pr.reference(), testing::attention_tolerance(config.type)));
  }

  std::unique_ptr<device> dev_;
};

class cuda_attention : public cuda_test,
                       public ::testing::WithParamInterface<std::tuple<dtype, int, int, int>> {
protected:
  attention_config base() const {
    const auto [type, head_dim, block_size, ratio] = GetParam();
    return testing::gqa_config(type, head_dim, block_size, ratio);
  }
};

TEST_P(cuda_attention, decode_matches_reference) {
  attention_config c = base();
  const int bs = c.block_size;
  c.seq_lens = {1, bs - 1, bs, bs + 1, 300, 2000};
  check_attention(c);
}

TEST_P(cuda_attention, prefill_and_extend_match_reference) {
  attention_config c = base();
  const int bs = c.block_size;
  c.seq_lens = {7, bs + 3, 261, 200};
  c.query_pad = 2 * c.num_kv_heads * c.head_dim;  // queries read in place from fused QKV rows
  c.query_lens = {7, 5, 2, 200};
  check_attention(c);
}

// Split-K decode through cuda_device's workspace and the launcher's plan: a
// context that is not a multiple of the chunk and sequences that end before
// the last split.
TEST_P(cuda_attention, long_decode_splits_and_matches_reference) {
  attention_config c = base();
  c.seq_lens = {2000, 1100, 40};
  check_attention(c, true);
}

std::string shape_name(const ::testing::TestParamInfo<std::tuple<dtype, int, int, int>>& info) {
  const auto [type, head_dim, block_size, ratio] = info.param;
  return std::string(dtype_name(type)) + "_d" + std::to_string(head_dim) + "_bs" +
         std::to_string(block_size) + "_gqa" + std::to_string(ratio);
}

INSTANTIATE_TEST_SUITE_P(all, cuda_attention,
                         ::testing::Combine(::testing::Values(dtype::f32, dtype::f16, dtype::bf16),
                                            ::testing::Values(64, 128), ::testing::Values(16, 32),
                                            ::testing::Values(1, 4)),
                         shape_name);

TEST_F(cuda_test, cache_write_and_copy_blocks) {
  const kv_cache_shape shape{.num_layers = 2, .num_blocks = 4, .block_size = 16, .num_kv_heads = 2,
                             .head_dim = 64, .type = dtype::f16};
  auto cache = allocate_kv_cache(*dev_, memory_kind::device, shape);
  ASSERT_TRUE(cache);
  const size_t row = 2 * 64 * 2;
  std::vector<uint8_t> key(3 * row), value(3 * row);
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<uint8_t>(i + 1);
    value[i] = static_cast<uint8_t>(2 * i + 1);
  }
  const std::vector<int64_t> slots{5, -1, 16};  // block 0 offset 5, padding, block 1 offset 0
  buffer k = upload(key), v = upload(value), s = upload(slots);
  const std::vector<int32_t> pairs{0, 3};
  buffer pr = upload(pairs);
  cache_write(*dev_, streams::compute,
              cache_write_params{k.data(), v.data(), cache->view.k(1), cache->view.v(1),
                                 static_cast<const int64_t*>(s.data()), 3, 2, 64, dtype::f16});
  copy_blocks(*dev_, streams::compute,
              copy_blocks_params{cache->view.base, static_cast<const int32_t*>(pr.data()), 1, 2, 4,
                                 shape.block_bytes()});
  const auto host = download(cache->memory, static_cast<size_t>(shape.total_bytes()));
  const kv_cache_view hv{const_cast<uint8_t*>(host.data()), shape};
  EXPECT_EQ(std::memcmp(static_cast<char*>(hv.block(1, 0, 0)) + 5 * row, key.data(), row), 0);
  EXPECT_EQ(std::memcmp(static_cast<char*>(hv.block(1, 1, 1)), value.data() + 2 * row, row), 0);
  // copied 0 -> 3
  EXPECT_EQ(std::memcmp(static_cast<char*>(hv.block(1, 0, 3)) + 5 * row, key.data(), row), 0);
}

// cuda_device::capture: a graph of what a function enqueued, run only when
// launched and as often as launched. Meanwhile a completion is pending on
// another stream, so the watchdog polls the streams throughout the capture
// (a query of the capturing stream would break it). A function whose
// launch fails gives the reason, and the stream works on.
TEST_F(cuda_test, a_captured_graph_runs_only_when_launched) {
  auto& cuda = static_cast<cuda_device&>(*dev_);
  const std::vector<int32_t> ones(1024, 1), zeros(1024, 0);
  buffer src = upload(ones), dst = upload(zeros);
  auto slow_done = std::make_shared<std::promise<void>>();
  std::future<void> slow = slow_done->get_future();
  (void)dev_->record(streams::swap_in, [slow_done] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    slow_done->set_value();
  });
  auto made = cuda.capture(streams::compute, [&] {
    dev_->copy_async(streams::compute, dst.data(), src.data(), 4096);
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the watchdog polls
    return true;
  });
  ASSERT_TRUE(std::holds_alternative<cudaGraphExec_t>(made)) << std::get<std::string>(made);
  const cudaGraphExec_t graph = std::get<cudaGraphExec_t>(made);
  EXPECT_EQ(download(dst, 4096), download(upload(zeros), 4096)) << "ran at capture";
  EXPECT_TRUE(cuda.launch_graph(streams::compute, graph));
  EXPECT_EQ(download(dst, 4096), download(src, 4096));
  testing::copy_to_device(*dev_, streams::compute, dst.data(), zeros.data(), 4096);
  EXPECT_TRUE(cuda.launch_graph(streams::compute, graph));
  EXPECT_EQ(download(dst, 4096), download(src, 4096)) << "a second launch";
  EXPECT_EQ(cudaGraphExecDestroy(graph), cudaSuccess);

  const auto refused = cuda.capture(streams::compute, [] { return false; });
  ASSERT_TRUE(std::holds_alternative<std::string>(refused));
  EXPECT_EQ(std::get<std::string>(refused), "a launch failed");
  EXPECT_FALSE(cuda.faulted());
  testing::copy_to_device(*dev_, streams::compute, dst.data(), zeros.data(), 4096);
  EXPECT_EQ(download(dst, 4096), download(upload(zeros), 4096));
  slow.wait();
}

TEST_F(cuda_test, swap_round_trip_with_completion_callback) {
  const kv_cache_shape shape{.num_layers = 2, .num_blocks = 6, .block_size = 16, .num_kv_heads = 2,
                             .head_dim = 128, .type = dtype::bf16};
  auto gpu = allocate_kv_cache(*dev_, memory_kind::device, shape);
  auto host = allocate_kv_cache(*dev_, memory_kind::pinned_host, shape);
  ASSERT_TRUE(gpu && host);
  std::vector<uint8_t> pattern(static_cast<size_t>(shape.total_bytes()));
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 11 / 3);
  std::memcpy(host->view.base, pattern.data(), pattern.size());
  const event_ptr in =
    swap_blocks(*dev_, streams::swap_in, host->view, gpu->view, {{1, 4}, {2, 0}});
  dev_->wait_event(streams::swap_out, in);
  in->wait();
  std::memset(host->view.base, 0, pattern.size());  // the swap-in has read it
  std::promise<void> out_done;
  const event_ptr out = swap_blocks(*dev_, streams::swap_out, gpu->view, host->view,
                                    {{4, 5}, {0, 3}}, [&] { out_done.set_value(); });
  ASSERT_EQ(out_done.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(out->ready());
  const kv_cache_view orig{pattern.data(), shape};
  for (int32_t l = 0; l < 2; ++l)
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(std::memcmp(host->view.block(l, w, 5), orig.block(l, w, 1),
                            static_cast<size_t>(shape.block_bytes())),
                0);
      EXPECT_EQ(std::memcmp(host->view.block(l, w, 3), orig.block(l, w, 2),
                            static_cast<size_t>(shape.block_bytes())),
                0);
    }
}

// A completion samples a step's rows with host_parallel_for: every row once,
// spread over the device's host threads.
TEST_F(cuda_test, host_parallel_for_in_a_completion_visits_every_row_on_several_threads) {
  auto d = make_device("cuda", device_options{.num_threads = 4});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  device& dev = **d;
  constexpr int64_t rows = 64;
  std::vector<std::atomic<int>> visits(rows);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::promise<void> done;
  (void)dev.record(streams::compute, [&] {
    dev.host_parallel_for(rows, [&](int64_t i) {
      visits[size_t(i)].fetch_add(1);
      {
        std::lock_guard lock{mutex};
        threads.insert(std::this_thread::get_id());
      }
      // NOTE: long enough that the helpers wake up while rows are left.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    done.set_value();
  });
  ASSERT_EQ(done.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  for (int64_t i = 0; i < rows; ++i)
    EXPECT_EQ(visits[size_t(i)].load(), 1) << "row " << i;
  EXPECT_GT(threads.size(), 1u);
}

// 300 pairs: more than one swap launch takes (swap_blocks_params::max_pairs),
// reversed order so that a pair lost at a launch boundary shows.
TEST_F(cuda_test, a_swap_larger_than_one_launch_moves_every_block) {
  const kv_cache_shape shape{.num_layers = 2, .num_blocks = 300, .block_size = 16,
                             .num_kv_heads = 1, .head_dim = 64, .type = dtype::f16};
  auto gpu = allocate_kv_cache(*dev_, memory_kind::device, shape);
  auto host = allocate_kv_cache(*dev_, memory_kind::pinned_host, shape);
  ASSERT_TRUE(gpu && host);
  const auto bytes = static_cast<size_t>(shape.total_bytes());
  std::vector<uint8_t> pattern(bytes);
  for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<uint8_t>(i * 13 / 7);
  testing::copy_to_device(*dev_, streams::compute, gpu->view.base, pattern.data(), bytes);
  std::vector<block_pair> pairs;
  for (int32_t b = 0; b < 300; ++b) pairs.push_back({b, 299 - b});
  EXPECT_GT(swap_calls(device_kind::cuda, pairs.size()), 1);
  swap_blocks(*dev_, streams::swap_out, gpu->view, host->view, pairs)->wait();
  const kv_cache_view orig{pattern.data(), shape};
  const auto block = static_cast<size_t>(shape.block_bytes());
  for (int32_t l = 0; l < 2; ++l)
    for (int w = 0; w < 2; ++w)
      for (int32_t b = 0; b < 300; ++b)
        ASSERT_EQ(std::memcmp(host->view.block(l, w, 299 - b), orig.block(l, w, b), block), 0)
            << "layer " << l << ", " << (w == 0 ? "K" : "V") << ", block " << b;
}

// An 18 GB cache: the last block's rows are 2^31 + elements past the start
// of its pool, so 32-bit slot, element or byte arithmetic anywhere on the
// way (cache write, attention, block copy, swap) lands elsewhere. (Untouched
// pages cost nothing in the shim.) A context of one token: attention returns
// that token's V row exactly.
TEST_F(cuda_test, offsets_past_2_gi_elements_in_a_large_cache) {
  const kv_cache_shape shape{.num_layers = 1, .num_blocks = 140000, .block_size = 16,
                             .num_kv_heads = 8, .head_dim = 128, .type = dtype::f32};
  if (dev_->memory(memory_kind::device).free_bytes < shape.total_bytes() + (int64_t{1} << 30))
    GTEST_SKIP() << "a GPU with less than 19 GB free"; // the shim has 80 GB
  auto cache = allocate_kv_cache(*dev_, memory_kind::device, shape);
  ASSERT_TRUE(cache) << "no room for " << shape.total_bytes() << " bytes";
  auto host = allocate_kv_cache(*dev_, memory_kind::pinned_host,
                                kv_cache_shape{shape.num_layers, 2, 16, 8, 128});
  ASSERT_TRUE(host);
  const int32_t last = static_cast<int32_t>(shape.num_blocks - 1);
  ASSERT_GT(int64_t{last} * 16 * 8 * 128, int64_t{1} << 31);
  const size_t row = 8 * 128; // floats of one token: 8 KV heads of 128
  std::vector<float> key(row), value(row), query(row);
  for (size_t i = 0; i < row; ++i) {
    key[i] = 0.001f * static_cast<float>(i % 97);
    value[i] = static_cast<float>(i) + 0.5f;
    query[i] = 1.0f;
  }
  const std::vector<int64_t> slot{int64_t{last} * 16}; // offset 0 of the last block
  const std::vector<int32_t> table{last}, lens{1}, pairs{last, 7};
  buffer k = upload(key), v = upload(value), q = upload(query), s = upload(slot), t = upload(table),
         l = upload(lens), pr = upload(pairs);
  buffer out = std::move(*dev_->allocate(memory_kind::device, row * sizeof(float)));
  cache_write(*dev_, streams::compute,
              cache_write_params{k.data(), v.data(), cache->view.k(0), cache->view.v(0),
                                 static_cast<const int64_t*>(s.data()), 1, 8, 128, dtype::f32});
  paged_attention_params p{};
  p.out = out.data();
  p.query = q.data();
  p.k_cache = cache->view.k(0);
  p.v_cache = cache->view.v(0);
  p.block_tables = static_cast<const int32_t*>(t.data());
  p.seq_lens = static_cast<const int32_t*>(l.data());
  p.num_seqs = p.num_tokens = 1;
  p.num_heads = p.num_kv_heads = 8;
  p.head_dim = 128;
  p.block_size = 16;
  p.max_blocks_per_seq = 1;
  p.scale = 1.0f / std::sqrt(128.0f);
  p.type = dtype::f32;
  paged_attention(*dev_, streams::compute, p);
  copy_blocks(*dev_, streams::compute,
              copy_blocks_params{cache->view.base, static_cast<const int32_t*>(pr.data()), 1, 1,
                                 shape.num_blocks, shape.block_bytes()});
  dev_->wait_event(streams::swap_out, dev_->record(streams::compute));
  swap_blocks(*dev_, streams::swap_out, cache->view, host->view, {{last, 1}})->wait();
  std::vector<float> attended(row), copied(row);
  testing::copy_to_host(*dev_, streams::compute, attended.data(), out.data(), row * sizeof(float));
  testing::copy_to_host(*dev_, streams::compute, copied.data(), cache->view.block(0, 1, 7),
                        row * sizeof(float));
  EXPECT_EQ(attended, value);
  EXPECT_EQ(copied, value);
  EXPECT_EQ(std::memcmp(host->view.block(0, 1, 1), value.data(), row * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(host->view.block(0, 0, 1), key.data(), row * sizeof(float)), 0);
}

} // namespace
} // namespace kvactor::kernels
