#pragma once
// The paged side of the paged-vs-dense tests (forward_test.cpp): small tiny
// models written once per binary, a harness that runs steps of the paged
// forward pass on a device (the CPU unless told; cuda_forward_test.cpp runs
// both) over scattered blocks, and the comparison helpers.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dense_reference.hpp"
#include "kernels/ops.hpp"
#include "tests/kernels/device_copy.hpp"
#include "model/forward/transformer.hpp"
#include "model/model_folder.hpp"
#include "model/sampler.hpp"
#include "model/tiny/tiny_model.hpp"
#include "temp_dir.hpp"

namespace kvactor::model::test_support {

// The tiny models' shapes: `small` (hidden 128, intermediate 192) for most
// tests, `wide` (hidden 256, intermediate 512) where rows must be whole
// 256-value super-blocks (the K formats).
enum class tiny_shape { small, wide };

inline tiny_shape shape_for(std::optional<quant_format> f) {
  return f && is_k_format(*f) ? tiny_shape::wide : tiny_shape::small;
}

inline std::filesystem::path& tiny_folder(architecture arch, tiny_shape shape = tiny_shape::small) {
  static std::map<std::pair<architecture, tiny_shape>, std::filesystem::path> folders;
  return folders[{arch, shape}];
}

inline constexpr int32_t block_size = 16;

// One small model per style and shape, written once per test binary;
// matrices in fp32 (the default) or kept in bf16 as on disk.
// The tiny test models' shapes.
inline tiny::tiny_options tiny_options_of(architecture arch, tiny_shape shape) {
  const bool wide = shape == tiny_shape::wide;
  tiny::tiny_options o;
  o.arch = arch;
  o.hidden_size = wide ? 256 : 128;
  o.num_layers = 2;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = 64; // q_size 256 != hidden: head_dim is its own key
  o.intermediate_size = wide ? 512 : 192;
  o.vocab_size = 512;
  o.max_context = 512;
  o.seed = 7;
  o.tie_embeddings = arch != architecture::llama; // as small Qwen2.5 and Qwen3 checkpoints are
  return o;
}

inline const loaded_model& tiny_model(architecture arch, dtype matrices = dtype::f32,
                                      tiny_shape shape = tiny_shape::small) {
  const std::pair key{arch, shape};
  static std::map<std::pair<architecture, tiny_shape>, std::unique_ptr<loaded_model>> bf16_models;
  if (matrices == dtype::bf16) {
    auto& m = bf16_models[key];
    if (!m) {
      tiny_model(arch, dtype::f32, shape);
      auto loaded = load_model_folder(tiny_folder(arch, shape), dtype::bf16);
      KVACTOR_ASSERT(loaded.has_value(), "loading the tiny model in bf16 failed");
      m = std::make_unique<loaded_model>(std::move(loaded).value());
    }
    return *m;
  }
  static std::map<std::pair<architecture, tiny_shape>,
                  std::pair<std::unique_ptr<test_support::temp_dir>, std::unique_ptr<loaded_model>>>
    cache;
  auto& slot = cache[key];
  if (!slot.second) {
    slot.first = std::make_unique<test_support::temp_dir>();
    const status s = tiny::write_model(slot.first->path(), tiny_options_of(arch, shape));
    KVACTOR_ASSERT(s, "writing the tiny model failed");
    auto m = load_model_folder(slot.first->path(), dtype::f32);
    KVACTOR_ASSERT(m.has_value(), "loading the tiny model failed");
    slot.second = std::make_unique<loaded_model>(std::move(m).value());
    tiny_folder(arch, shape) = slot.first->path();
  }
  return *slot.second;
}

inline std::vector<int32_t> prompt(int n, int salt) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back((i * 37 + salt * 101 + 11) % 500);
  return t;
}

// A sequence as the scheduler would hold it: its tokens, its blocks, and how
// many tokens have K/V in the cache.
struct paged_seq {
  std::vector<int32_t> tokens;
  std::vector<int32_t> table;
  int32_t num_cached = 0;
};

class harness {
public:
  explicit harness(const loaded_model& m, int64_t num_blocks = 64,
                   const std::string& device = "cpu", kernels::dtype kv_type = kernels::dtype::f32,
                   dtype activations = dtype::f32, forward_limits limits = {256, 16},
                   std::optional<quant_format> quantize = std::nullopt)
    : m_(m) {
    kernels::device_options opts;
    opts.num_threads = 2;
    auto d = kernels::make_device(device, opts);
    KVACTOR_ASSERT(d.has_value(), "device");
    dev_ = std::move(d.value());
    auto c = kernels::allocate_kv_cache(
      *dev_, kernels::memory_kind::device,
      transformer::cache_shape(m.config, num_blocks, block_size, kv_type));
    KVACTOR_ASSERT(c.has_value(), "kv cache");
    cache_ = std::move(*c);
    fill_nan(*dev_, cache_.view);
    auto t = transformer::create(m.config, m.weights, *dev_, cache_.view, limits, activations,
                                 quantize);
    if (!t) std::fprintf(stderr, "%s\n", t.error().message.c_str());
    KVACTOR_ASSERT(t.has_value(), "transformer");
    tf_ = std::move(t.value());
    // Scattered block ids, so tables are never contiguous runs.
    for (int64_t i = 0; i < num_blocks; ++i)
      free_.push_back(static_cast<int32_t>((i * 5 + 3) % num_blocks));
  }

  // NaN in every unused slot: a read past a context poisons the logits.
  static void fill_nan(kernels::device& dev, const kernels::kv_cache_view& v) {
    std::vector<std::byte> nan(static_cast<size_t>(v.shape.total_bytes()));
    for (size_t i = 0; i < nan.size() / kernels::dtype_size(v.shape.type); ++i)
      kernels::store_from_float(v.shape.type, nan.data(), i,
                                std::numeric_limits<float>::quiet_NaN());
    kernels::testing::copy_to_device(dev, kernels::streams::compute, v.base, nan.data(),
                                     nan.size());
  }

  int32_t take_block() {
    KVACTOR_ASSERT(!free_.empty(), "harness out of blocks");
    const int32_t b = free_.front();
    free_.erase(free_.begin());
    return b;
  }

  // One step: for each (seq, n) the next n uncached tokens. A sequence whose
  // step reaches its last token samples (every chunk samples with
  // sample_every_chunk). Returns [num sampled, vocab].
  std::vector<float> step(std::vector<std::pair<paged_seq*, int32_t>> work,
                          bool sample_every_chunk = false) {
    std::vector<sequence_chunk> chunks;
    for (auto& [s, n] : work) {
      const int32_t end = s->num_cached + n;
      KVACTOR_ASSERT(end <= static_cast<int32_t>(s->tokens.size()), "step past the tokens");
      while (static_cast<int32_t>(s->table.size()) * block_size < end)
        s->table.push_back(take_block());
      chunks.push_back(
        {s->num_cached,
         std::span<const int32_t>(s->tokens).subspan(size_t(s->num_cached), size_t(n)), s->table,
         sample_every_chunk || end == static_cast<int32_t>(s->tokens.size())});
    }
    last_batch_ = forward_batch::build(chunks, block_size);
    auto logits = tf_->run(last_batch_);
    if (!logits) std::fprintf(stderr, "%s\n", logits.error().message.c_str());
    KVACTOR_ASSERT(logits.has_value(), "forward step");
    for (auto& [s, n] : work) s->num_cached += n;
    return std::move(logits).value();
  }

  // The batch of the last step (emulated_forward_test replays it).
  const forward_batch& last_batch() const { return last_batch_; }
  // K (which 0) or V (which 1) of layer `layer` for positions [0, num_cached)
  // of `s`, position after position: [num_cached, num_kv_heads, head_dim]
  // (a bf16 cache widened, exactly: equal floats are equal bits).
  std::vector<float> cached_rows(const paged_seq& s, int32_t layer, int which) const {
    const kernels::kv_cache_shape& shape = cache_.view.shape;
    const int64_t row = int64_t{shape.num_kv_heads} * shape.head_dim;
    std::vector<float> out(size_t(s.num_cached * row));
    for (int32_t p = 0; p < s.num_cached; ++p) {
      const auto* block =
        static_cast<const char*>(cache_.view.block(layer, which, s.table[size_t(p / block_size)]));
      for (int64_t i = 0; i < row; ++i)
        out[size_t(p * row + i)] =
          kernels::load_as_float(shape.type, block, size_t((p % block_size) * row + i));
    }
    return out;
  }

  kernels::device& dev() { return *dev_; }
  const transformer& forward() const { return *tf_; }
  const kernels::kv_cache_view& cache() const { return cache_.view; }
  int64_t vocab() const { return m_.config.vocab_size; }

private:
  const loaded_model& m_;
  std::unique_ptr<kernels::device> dev_;
  kernels::kv_cache cache_;
  std::unique_ptr<transformer> tf_;
  std::vector<int32_t> free_;
  forward_batch last_batch_;
};

// How close the paged pass's logits must come to the dense reference's:
// |got - want| <= atol + rtol |want|.
struct tolerance {
  double atol = 2e-4;
  double rtol = 1e-3;
};

// |got - want| within `tol` everywhere; reports the first mismatches.
inline void expect_close(std::span<const float> got, const std::vector<double>& want,
                         const std::string& what, tolerance tol = {}) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int num_bad = 0;
  double worst = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(double(got[i]) - want[i]);
    worst = std::max(worst, std::isnan(diff) ? 1e30 : diff);
    if (!(diff <= tol.atol + tol.rtol * std::abs(want[i]))) {
      if (num_bad++ < 5)
        first += " [" + std::to_string(i) + "] " + std::to_string(got[i]) + " vs " +
                 std::to_string(want[i]);
    }
  }
  EXPECT_EQ(num_bad, 0) << what << ": " << num_bad << " mismatches, worst " << worst << ";"
                        << first;
}

inline token_id argmax(const std::vector<double>& v) {
  return static_cast<token_id>(std::max_element(v.begin(), v.end()) - v.begin());
}

inline std::span<const float> row(const std::vector<float>& logits, int64_t i, int64_t vocab) {
  return std::span<const float>(logits).subspan(size_t(i * vocab), size_t(vocab));
}

// Feeds the reference every token of `s` it has not seen; returns the last logits.
inline std::vector<double> catch_up(dense_reference& ref, const paged_seq& s) {
  while (ref.num_tokens() < static_cast<int64_t>(s.tokens.size()))
    ref.push(s.tokens[size_t(ref.num_tokens())]);
  return ref.last();
}

// The dtypes a forward test computes with on both sides.
struct dtypes {
  dtype matrices = dtype::f32;    // as loaded: fp32, or bf16 (widened unless activations are bf16)
  dtype activations = dtype::f32; // the products' input rows
  dtype kv = dtype::f32;          // the KV cache

  bool exact() const { return activations == dtype::f32 && kv == dtype::f32; }
};

// The combinations the CUDA pass is tested in, against the emulator and on
// a GPU alike: all fp32, bf16 matrices widened, bf16 products, a bf16 KV
// cache, and all bf16.
inline const std::vector<dtypes> every_dtypes = {
  {dtype::f32, dtype::f32, dtype::f32},   {dtype::bf16, dtype::f32, dtype::f32},
  {dtype::bf16, dtype::bf16, dtype::f32}, {dtype::f32, dtype::f32, dtype::bf16},
  {dtype::bf16, dtype::bf16, dtype::bf16}};

// A parameterised test's name, e.g. llama_bf16_act_f32_kv_bf16.
inline std::string case_name(
  const ::testing::TestParamInfo<std::tuple<architecture, dtypes>>& info) {
  const auto [arch, t] = info.param;
  return std::string(architecture_name(arch)) + "_" + kernels::dtype_name(t.matrices) + "_act_" +
         kernels::dtype_name(t.activations) + "_kv_" + kernels::dtype_name(t.kv);
}

} // namespace kvactor::model::test_support
