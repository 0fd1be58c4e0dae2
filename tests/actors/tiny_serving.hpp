#pragma once
// Shared by the model_runner and runtime tests: a small Llama-style tiny
// model written once per test binary, and the greedy tokens of the paged
// forward pass run alone (one sequence, no actors) to compare against.

#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "kvactor/kvactor.hpp"
#include "model/forward/transformer.hpp"
#include "model/model_folder.hpp"
#include "model/safetensors_writer.hpp"
#include "model/sampler.hpp"
#include "model/tiny/tiny_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace kvactor::testing {

// A folder removed with its contents at exit.
struct scratch_folder {
  std::filesystem::path path;
  ~scratch_folder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline model::tiny::tiny_options serving_options(int32_t head_dim) {
  model::tiny::tiny_options o;
  o.hidden_size = 128;
  o.num_layers = 2;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = head_dim;
  o.intermediate_size = 192;
  o.vocab_size = 512;
  o.max_context = 1024;
  o.seed = 3;
  return o;
}

// The folder kvactor-`name`-<pid>-<head_dim>, written by `write` on first
// use in this test binary.
inline const std::filesystem::path&
written_once(const char* name, int32_t head_dim,
             const std::function<void(const std::filesystem::path&)>& write) {
  static std::map<std::pair<std::string, int32_t>, std::unique_ptr<scratch_folder>> dirs;
  auto& dir = dirs[{name, head_dim}];
  if (!dir) {
    dir.reset(new scratch_folder{std::filesystem::temp_directory_path() /
                                 ("kvactor-" + std::string(name) + "-" +
                                  std::to_string(::getpid()) + "-" + std::to_string(head_dim))});
    write(dir->path);
  }
  return dir->path;
}

// A small Llama-style model, written once per test binary; heads of 32, or
// of 64 for the CUDA device (its attention takes head_dim 64 or 128).
inline const std::filesystem::path& model_dir(int32_t head_dim = 32) {
  return written_once("model-runtime", head_dim, [&](const std::filesystem::path& dir) {
    EXPECT_TRUE(bool(model::tiny::write_model(dir, serving_options(head_dim))));
  });
}

// That model as a corrupt checkpoint: its final norm's weights NaN, so every
// logit it gives is NaN.
inline const std::filesystem::path& nan_model_dir(int32_t head_dim = 32) {
  return written_once("nan-model", head_dim, [&](const std::filesystem::path& dir) {
    const model::tiny::tiny_options o = serving_options(head_dim);
    EXPECT_TRUE(bool(model::tiny::write_model(dir, o)));
    model::safetensors_writer w;
    for (const auto& spec : model::tiny::tensor_specs(o)) {
      auto values = model::tiny::tensor_values(o, spec);
      if (spec.name == "model.norm.weight")
        std::ranges::fill(values, std::numeric_limits<float>::quiet_NaN());
      w.add_f32(spec.name, o.on_disk, spec.shape, values);
    }
    EXPECT_TRUE(bool(w.write(dir / "model.safetensors")));
  });
}

// Requests of `prompt` to nan_model_dir(): greedy, and sampled with logprobs.
inline std::vector<generate_request> greedy_and_sampled(std::vector<int32_t> prompt) {
  generate_request greedy;
  greedy.prompt_tokens = std::move(prompt);
  greedy.max_tokens = 8;
  greedy.ignore_eos = true;
  generate_request sampled = greedy;
  sampled.temperature = 0.8f;
  sampled.top_p = 0.9f;
  sampled.logprobs = 2;
  return {greedy, sampled};
}

// How each of them ends: an error at its first token, and no token.
inline void expect_no_finite_logit(const done_event& done) {
  EXPECT_EQ(done.finish_reason, finish_reason::error);
  EXPECT_EQ(done.error_code, errc::non_finite_logits);
  EXPECT_THAT(done.error_message, ::testing::HasSubstr("output token 0 held no finite number"));
  EXPECT_THAT(done.tokens, ::testing::IsEmpty());
}

// Greedy tokens of the paged forward pass run alone, one sequence, no actors,
// over a cache of `kv_type` in blocks of `bs` tokens, its products taking
// `activations` (bf16: on bf16 matrices), the matrices quantised to
// `quantize` if set. The pass is batch-invariant, so a
// runtime with the same cache dtype, block size and activations gives these
// tokens bit for bit, whatever its batches and preemptions.
inline std::vector<int32_t> greedy_alone(const std::vector<int32_t>& prompt, int32_t max_tokens,
                                         kernels::dtype kv_type = kernels::dtype::f32,
                                         int32_t bs = 16,
                                         model::dtype activations = model::dtype::f32,
                                         std::optional<model::quant_format> quantize = {}) {
  auto m = model::load_model_folder(model_dir(), activations);
  EXPECT_TRUE(m.has_value());
  auto dev = kernels::make_device("cpu");
  const int64_t num_blocks = (int64_t(prompt.size()) + max_tokens) / bs + 1;
  auto cache =
    kernels::allocate_kv_cache(**dev, kernels::memory_kind::device,
                               model::transformer::cache_shape(m->config, num_blocks, bs, kv_type));
  auto tf =
    model::transformer::create(m->config, m->weights, **dev, cache->view, {512, 1}, activations,
                               quantize);
  EXPECT_TRUE(tf.has_value());
  std::vector<int32_t> table;
  for (int32_t b = 0; b < num_blocks; ++b) table.push_back(int32_t(num_blocks - 1 - b));
  std::vector<int32_t> history = prompt, out;
  int32_t start = 0;
  while (int32_t(out.size()) < max_tokens) {
    const std::span<const int32_t> fresh = std::span<const int32_t>(history).subspan(size_t(start));
    const model::sequence_chunk c{start, fresh, table, true};
    const std::vector<float> logits =
      (*tf)->run(model::forward_batch::build(std::span(&c, 1), bs)).value();
    start = int32_t(history.size());
    out.push_back(model::greedy(logits));
    history.push_back(out.back());
  }
  return out;
}

inline std::vector<int32_t> tokens(int n, int32_t first) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = (first + 7 * i) % 500;
  return v;
}

} // namespace kvactor::testing
