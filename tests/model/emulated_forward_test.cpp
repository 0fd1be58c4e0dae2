// The CUDA forward pass's step without a GPU: device_forward's launch
// sequence — the one cuda_transformer enqueues — run with the CUDA kernel
// sources through the emulator (model ops, cache write, paged attention) and
// the products as cuBLAS gets them (the column-major arguments of
// row_major_linear) run by OpenBLAS, over host memory laid out exactly as the
// device memory is (the weight_plan image, the batch_upload buffer, a NaN
// filled KV cache). Every step of the CPU forward pass is replayed on it and
// compared: same greedy tokens, logits within the forward tests' tolerance.
// Both sides compute with the same dtypes: fp32, bf16 matrices widened, bf16
// activations (bf16 matrices in the image, the rounding kernel, bf16
// products as cuBLAS gets them, widened and multiplied by sgemm), each with
// an fp32 or a bf16 KV cache (the kernels' bf16 paths).
// What this does not cover: the CUDA runtime and cuBLAS calls themselves and
// real-GPU scheduling (cuda_forward_test, on a GPU).
// NOTE: no CUDA header in this file (the emulator defines its own surface).
#include <gtest/gtest.h>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "forward_harness.hpp"
#include "kernels/cuda/cache_write.cuh"
#include "kernels/cuda/model_ops.cuh"
#include "kernels/cuda/paged_attention.cuh"
#include "model/forward/column_major_gemm.hpp"
#include "model/forward/device_forward.hpp"
#include "model/rope.hpp"

namespace kvactor::model {
namespace {

using namespace test_support;
namespace gpu = kernels::gpu;
using emu::dim3;

// forward_ops through the emulator; mirrors the launchers' grids
// (model/cuda/model_kernels.cu, kernels/cuda/kernels.cu).
class emulated_ops final : public forward_ops {
public:
  status embedding(const void* table, dtype type, const int32_t* ids, int32_t num_tokens,
                   int32_t hidden, float* out) override {
    if (type == dtype::bf16)
      emu::launch(dim3(unsigned(num_tokens)), dim3(gpu::model_ops_threads),
                  gpu::embedding_kernel<gpu::bf16>, static_cast<const gpu::bf16*>(table), ids, out,
                  hidden);
    else
      emu::launch(dim3(unsigned(num_tokens)), dim3(gpu::model_ops_threads),
                  gpu::embedding_kernel<float>, static_cast<const float*>(table), ids, out, hidden);
    return {};
  }
  status rms_norm(const float* x, int64_t ldx, float* out, int64_t ldo, int32_t num_tokens,
                  int32_t heads_per_row, int32_t n, const float* weight, float eps) override {
    emu::launch(dim3(unsigned(num_tokens * heads_per_row)), dim3(gpu::model_ops_threads),
                gpu::rms_norm_kernel<float>, x, ldx, out, ldo, heads_per_row, n, weight, eps);
    return {};
  }
  status rms_norm_bf16(const float* x, int64_t ldx, uint16_t* out, int64_t ldo, int32_t num_tokens,
                       int32_t n, const float* weight, float eps) override {
    emu::launch(dim3(unsigned(num_tokens)), dim3(gpu::model_ops_threads),
                gpu::rms_norm_kernel<gpu::bf16>, x, ldx, reinterpret_cast<gpu::bf16*>(out), ldo,
                1, n, weight, eps);
    return {};
  }
  status rope(float* x, int64_t ldx, int32_t num_tokens, int32_t num_heads, int32_t head_dim,
              const float* cos, const float* sin) override {
    emu::launch(dim3(unsigned(num_tokens)), dim3(gpu::model_ops_threads), gpu::rope_kernel, x, ldx,
                num_heads, head_dim, cos, sin);
    return {};
  }
  status rope_bf16(const float* x, int64_t ldx, int32_t num_tokens, int32_t num_rotated,
                   int32_t num_heads, int32_t head_dim, const float* cos, const float* sin,
                   uint16_t* out, int64_t ldo) override {
    emu::launch(dim3(unsigned(num_tokens)), dim3(gpu::model_ops_threads), gpu::rope_bf16_kernel, x,
                ldx, num_rotated, num_heads, head_dim, cos, sin, reinterpret_cast<gpu::bf16*>(out),
                ldo);
    return {};
  }
  status swiglu(const float* gate, const float* up, float* out, int64_t num) override {
    const int64_t blocks =
      std::min<int64_t>((num + gpu::model_ops_threads - 1) / gpu::model_ops_threads, 65535);
    emu::launch(dim3(unsigned(blocks)), dim3(gpu::model_ops_threads), gpu::swiglu_kernel<float>,
                gate, up, out, num);
    return {};
  }
  status swiglu_bf16(const float* gate, const float* up, uint16_t* out, int64_t num) override {
    const int64_t blocks =
      std::min<int64_t>((num + gpu::model_ops_threads - 1) / gpu::model_ops_threads, 65535);
    emu::launch(dim3(unsigned(blocks)), dim3(gpu::model_ops_threads), gpu::swiglu_kernel<gpu::bf16>,
                gate, up, reinterpret_cast<gpu::bf16*>(out), num);
    return {};
  }
  status add_bias(float* y, int64_t ldy, int32_t num_rows, int32_t n,
                  const float* bias) override {
    emu::launch(dim3(unsigned(num_rows)), dim3(gpu::model_ops_threads), gpu::add_bias_kernel, y,
                ldy, bias, n);
    return {};
  }
  status gather_rows(const float* x, const int32_t* rows, int32_t num_rows, int32_t n,
                     float* out) override {
    emu::launch(dim3(unsigned(num_rows)), dim3(gpu::model_ops_threads), gpu::gather_rows_kernel, x,
                rows, out, n);
    return {};
  }
  // The arguments cublas_gemm hands cuBLAS, through OpenBLAS's column-major sgemm.
  status linear(const float* x, int64_t ldx, int64_t m, const float* w, int64_t n, int64_t k,
                float* y, int64_t ldy, bool accumulate) override {
    const column_major_gemm g = row_major_linear(x, ldx, m, w, n, k, y, ldy);
    cblas_sgemm(CblasColMajor, g.transpose_a ? CblasTrans : CblasNoTrans,
                g.transpose_b ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n), blasint(g.k),
                1.0f, g.a, blasint(g.lda), g.b, blasint(g.ldb), accumulate ? 1.0f : 0.0f, g.c,
                blasint(g.ldc));
    return {};
  }
  // bf16 x and W widened (exact) and multiplied as fp32: what cuBLAS computes
  // with CUDA_R_16BF inputs and fp32 compute, up to the order of the sums.
  status linear_bf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t n,
                     int64_t k, float* y, int64_t ldy, bool accumulate) override {
    std::vector<float> xf(size_t(m * k)), wf(size_t(n * k));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t i = 0; i < k; ++i) xf[size_t(r * k + i)] = bf16_to_f32(x[r * ldx + i]);
    for (size_t i = 0; i < wf.size(); ++i) wf[i] = bf16_to_f32(w[i]);
    return linear(xf.data(), k, m, wf.data(), n, k, y, ldy, accumulate);
  }
  status round_to_bf16(const float* x, int64_t ldx, int32_t num_rows, int32_t n, uint16_t* out,
                       int64_t ldo) override {
    emu::launch(dim3(unsigned(num_rows)), dim3(gpu::model_ops_threads), gpu::round_to_bf16_kernel,
                x, ldx, reinterpret_cast<gpu::bf16*>(out), ldo, n);
    return {};
  }
  status widen_bf16(const uint16_t* x, float* out, int64_t num) override {
    const int64_t blocks =
      std::min<int64_t>((num + gpu::model_ops_threads - 1) / gpu::model_ops_threads, 65535);
    emu::launch(dim3(unsigned(blocks)), dim3(gpu::model_ops_threads), gpu::widen_bf16_kernel,
                reinterpret_cast<const gpu::bf16*>(x), out, num);
    return {};
  }
  status cache_write(const kernels::cache_write_params& p) override {
    emu::launch(dim3(unsigned(p.num_tokens)), dim3(gpu::cache_write_threads),
                gpu::cache_write_kernel, p);
    return {};
  }
  status paged_attention(const kernels::paged_attention_params& p) override {
    if (p.type == dtype::bf16) return attention<gpu::bf16>(p);
    return attention<float>(p);
  }

private:
  template <class T>
  status attention(const kernels::paged_attention_params& p) {
    if (p.head_dim == 64) return attention<T, 64>(p);
    if (p.head_dim == 128) return attention<T, 128>(p);
    return error{"head_dim " + std::to_string(p.head_dim)};
  }
  template <class T, int HEAD_DIM>
  status attention(const kernels::paged_attention_params& p) {
    const int group = gpu::attention_group_size(p.num_heads / p.num_kv_heads);
    const dim3 grid(unsigned(p.num_tokens) * unsigned(p.num_heads / group)),
      block(gpu::attention_threads);
    switch (group) {
    case 1: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 1>, p); break;
    case 2: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 2>, p); break;
    case 4: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 4>, p); break;
    case 8: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 8>, p); break;
    default: return error{"group " + std::to_string(group)};
    }
    return {};
  }

};

// Host memory in the layout cuda_transformer gives its device memory.
class emulated_device {
public:
  // `matrices`: the image's (bf16 with bf16 activations, as cuda_transformer).
  emulated_device(const loaded_model& m, int64_t num_blocks, forward_limits limits, dtype matrices,
                  dtype kv)
    : config_(m.config),
      plan_(weight_plan::make(m.weights, matrices)),
      inv_freq_(rope_inv_freq(m.config)) {
    // The weight image, written slot by slot as device_weights::upload does.
    weights_.resize(plan_.total_bytes / sizeof(float));
    auto* image = reinterpret_cast<std::byte*>(weights_.data());
    for (const weight_slot& s : plan_.uploads())
      device_image(s, 0, std::span<std::byte>(image + s.offset, s.bytes));
    const kernels::kv_cache_shape shape =
      transformer::cache_shape(m.config, num_blocks, block_size, kv);
    cache_memory_.resize(size_t(shape.total_bytes() / 4));
    for (size_t i = 0; i < size_t(shape.total_bytes()) / kernels::dtype_size(kv); ++i)
      kernels::store_from_float(kv, cache_memory_.data(), i,
                                std::numeric_limits<float>::quiet_NaN());
    cache_ = kernels::kv_cache_view{cache_memory_.data(), shape};
    const auto half = int32_t(inv_freq_.size());
    max_blocks_per_seq_ = max_blocks_per_seq(m.config, block_size);
    upload_.resize(batch_upload_layout::capacity(limits.max_num_tokens, limits.max_num_seqs,
                                                 max_blocks_per_seq_, half)
                       .total_bytes);
    const auto t = size_t(limits.max_num_tokens), s = size_t(limits.max_num_seqs),
               h = size_t(m.config.hidden_size);
    const auto inter = size_t(m.config.intermediate_size);
    hidden_.resize(t * h);
    normed_.resize(t * h);
    qkv_.resize(t * size_t(m.config.q_size() + 2 * m.config.kv_size()));
    attn_.resize(t * size_t(m.config.q_size()));
    gate_.resize(t * inter);
    up_.resize(t * inter);
    last_.resize(s * h);
    logits_.resize(s * size_t(m.config.vocab_size));
    if (matrices == dtype::bf16)
      x_bf16_.resize(std::max(t, s) * size_t(bf16_input_width(m.config)));
    if (kv == dtype::bf16) {
      qkv_bf16_.resize(t * size_t(m.config.q_size() + 2 * m.config.kv_size()));
      attn_bf16_.resize(t * size_t(m.config.q_size()));
    }
  }

  // One step: [num_sample_rows, vocab]. A decode step's tables as wide as
  // cuda_transformer uploads them for a CUDA graph.
  std::vector<float> run(const forward_batch& b) {
    const int32_t width =
      b.is_decode() ? graph_table_width(b.max_blocks_per_seq, max_blocks_per_seq_) : 0;
    const auto layout = batch_upload_layout::of(b, int32_t(inv_freq_.size()), width);
    pack_batch(b, inv_freq_, layout, upload_);
    forward_buffers buf;
    buf.weights = reinterpret_cast<const std::byte*>(weights_.data());
    buf.upload = upload_.data();
    buf.hidden = hidden_.data();
    buf.normed = normed_.data();
    buf.qkv = qkv_.data();
    buf.attn = attn_.data();
    buf.gate = gate_.data();
    buf.up = up_.data();
    buf.last = last_.data();
    buf.logits = logits_.data();
    buf.x_bf16 = x_bf16_.empty() ? nullptr : x_bf16_.data();
    buf.qkv_bf16 = qkv_bf16_.empty() ? nullptr : qkv_bf16_.data();
    buf.attn_bf16 = attn_bf16_.empty() ? nullptr : attn_bf16_.data();
    const status s = enqueue_forward(ops_, config_, plan_, cache_, b, layout, buf);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return std::vector<float>(logits_.begin(),
                              logits_.begin() + b.num_sample_rows() * config_.vocab_size);
  }

private:
  model_config config_;
  weight_plan plan_;
  std::vector<double> inv_freq_;
  int32_t max_blocks_per_seq_ = 0;
  std::vector<float> weights_; // [plan_.total_bytes / 4]
  std::vector<float> cache_memory_;
  kernels::kv_cache_view cache_;
  std::vector<std::byte> upload_;
  std::vector<float> hidden_, normed_, qkv_, attn_, gate_, up_, last_, logits_;
  std::vector<uint16_t> x_bf16_, qkv_bf16_, attn_bf16_;
  emulated_ops ops_;
};

// fp32: the forward tests' tolerance. bf16 activations or cache: both sides
// round the same values, but values a few fp32 ulps apart (sums in other
// orders) can round to neighbouring bf16 values (u = 2^-8 of themselves),
// and the CPU's bf16 attention rounds P where the CUDA kernel keeps fp32:
// forward_test's bf16 bound against the dense reference, 2u + 2u |ref|, and
// its near-tie allowance for the greedy token.
tolerance tolerance_for(const dtypes& d) {
  const double u = std::ldexp(1.0, -8);
  return d.exact() ? tolerance{} : tolerance{2 * u, 2 * u};
}

// (style, dtypes)
class emulated_forward_test : public ::testing::TestWithParam<std::tuple<architecture, dtypes>> {
protected:
  void SetUp() override {
    const auto [arch, t] = GetParam();
    const dtype cpu_matrices = t.activations == dtype::bf16 ? dtype::bf16 : dtype::f32;
    cpu_ =
      std::make_unique<harness>(tiny_model(arch, cpu_matrices), 64, "cpu", t.kv, t.activations);
    emulated_ = std::make_unique<emulated_device>(tiny_model(arch, t.matrices), 64,
                                                  forward_limits{256, 16}, t.activations, t.kv);
  }

  // A step on the CPU, replayed on the emulated device; returns the CPU's logits.
  std::vector<float> step(std::vector<std::pair<paged_seq*, int32_t>> work,
                          const std::string& what) {
    const std::vector<float> want = cpu_->step(std::move(work));
    const std::vector<float> got = emulated_->run(cpu_->last_batch());
    EXPECT_EQ(got.size(), want.size()) << what;
    const int64_t vocab = cpu_->vocab();
    const dtypes t = std::get<1>(GetParam());
    const tolerance tol = tolerance_for(t);
    for (int64_t r = 0; r < static_cast<int64_t>(std::min(got.size(), want.size())) / vocab; ++r) {
      const auto w = row(want, r, vocab);
      const token_id top = greedy(w), picked = greedy(row(got, r, vocab));
      if (t.exact() || picked == top)
        EXPECT_EQ(picked, top) << what << ", row " << r;
      else
        EXPECT_LE(double(w[size_t(top)]) - double(w[size_t(picked)]),
                  2 * (tol.atol + tol.rtol * std::abs(double(w[size_t(top)]))))
          << what << ", row " << r << ": token " << picked << " for the CPU's " << top
          << ", not a near-tie";
      expect_close(row(got, r, vocab), std::vector<double>(w.begin(), w.end()),
                   what + ", row " + std::to_string(r), tol);
    }
    return want;
  }

  std::unique_ptr<harness> cpu_;
  std::unique_ptr<emulated_device> emulated_;
};

TEST_P(emulated_forward_test, mixed_prefill_batch_then_batched_decode) {
  const std::vector<int> lengths{1, 5, 16, 17, 40};
  std::vector<paged_seq> seqs;
  for (size_t i = 0; i < lengths.size(); ++i)
    seqs.push_back({prompt(lengths[i], int(i) + 2), {}, 0});
  std::vector<std::pair<paged_seq*, int32_t>> work;
  for (auto& s : seqs) work.push_back({&s, int32_t(s.tokens.size())});
  std::vector<float> logits = step(work, "prefill");
  for (int decode = 0; decode < 3; ++decode) { // the decode layout of the attention
    work.clear();
    for (size_t i = 0; i < seqs.size(); ++i) {
      seqs[i].tokens.push_back(greedy(row(logits, int64_t(i), cpu_->vocab())));
      work.push_back({&seqs[i], 1});
    }
    logits = step(work, "decode " + std::to_string(decode));
  }
}

// The chunked steps in fp32 and all-bf16 only: the other mixes are the mixed batch's concern.
class emulated_forward_chunks : public emulated_forward_test {};

TEST_P(emulated_forward_chunks, chunked_prefill_with_a_decode_riding_along) {
  for (int32_t chunk : {7, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    SetUp(); // fresh caches and block lists for each chunk size
    paged_seq s{prompt(70, 9), {}, 0}, other{prompt(3, 4), {}, 0};
    EXPECT_TRUE(step({{&s, chunk}}, "first chunk alone").empty()); // no row samples
    std::vector<float> other_logits = step({{&other, 3}}, "other's prefill");
    std::vector<float> logits;
    while (s.num_cached < 70) {
      const int32_t n = std::min<int32_t>(chunk, 70 - s.num_cached);
      other.tokens.push_back(greedy(row(other_logits, 0, cpu_->vocab())));
      logits = step({{&s, n}, {&other, 1}}, "chunk at " + std::to_string(s.num_cached));
      other_logits.assign(logits.begin() + (s.num_cached == 70 ? cpu_->vocab() : 0), logits.end());
    }
    s.tokens.push_back(greedy(row(logits, 0, cpu_->vocab())));
    step({{&s, 1}}, "decode");
  }
}

constexpr auto bf16 = dtype::bf16;
constexpr auto f32 = dtype::f32;

INSTANTIATE_TEST_SUITE_P(styles, emulated_forward_test,
                         ::testing::Combine(::testing::Values(architecture::llama,
                                                              architecture::qwen2,
                                                              architecture::qwen3),
                                            ::testing::ValuesIn(every_dtypes)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(
  styles, emulated_forward_chunks,
  ::testing::Combine(::testing::Values(architecture::llama, architecture::qwen3),
                     ::testing::Values(dtypes{f32, f32, f32}, dtypes{bf16, bf16, bf16})),
  case_name);

} // namespace
} // namespace kvactor::model
