// The model's element-wise CUDA kernel sources (kernels/cuda/model_ops.cuh)
// run through the CUDA emulator, against the CPU layers the forward pass uses.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cuda/model_ops.cuh"
#include "model/dtype.hpp"
#include "model/forward/layers.hpp"

namespace kvactor::model {
namespace {

std::vector<float> values(size_t n, int salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::sin(float(i) * 0.37f + float(salt)) * (1.0f + float(i % 5));
  return v;
}

// |a - b| <= 1e-6 + 1e-5 |b| everywhere (sums in another order).
void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= 1e-6f + 1e-5f * std::abs(want[i])) && bad++ < 5)
      ADD_FAILURE() << "[" << i << "] " << got[i] << " vs " << want[i];
  EXPECT_EQ(bad, 0);
}

TEST(emulated_model_ops, rms_norm_rows_match_the_cpu_layer) {
  kernels::thread_pool pool(1);
  for (int32_t n : {64, 200, 512}) {
    const int32_t rows = 3;
    const int64_t ld = n + 8; // strided rows
    const std::vector<float> x = values(size_t(rows * ld), n), w = values(size_t(n), 1);
    std::vector<float> got(x.size(), 0.0f), want(x.size(), 0.0f);
    emu::launch(dim3(rows), dim3(kernels::gpu::model_ops_threads),
                kernels::gpu::rms_norm_kernel<float>, x.data(), ld, got.data(), ld, 1, n, w.data(),
                1e-6f);
    layers::rms_norm(pool, x.data(), ld, want.data(), ld, rows, n, w.data(), 1e-6f);
    expect_near_all(got, want);
  }
}

TEST(emulated_model_ops, per_head_rms_norm_matches_the_cpu_layer) {
  kernels::thread_pool pool(1);
  const int32_t tokens = 2, heads = 3, dim = 64;
  const int64_t ld = 5 * dim; // the q part of a fused row
  std::vector<float> got = values(size_t(tokens * ld), 4), want = got;
  const std::vector<float> w = values(size_t(dim), 2);
  emu::launch(dim3(tokens * heads), dim3(kernels::gpu::model_ops_threads),
              kernels::gpu::rms_norm_kernel<float>, static_cast<const float*>(got.data()), ld,
              got.data(), ld, heads, dim, w.data(), 1e-6f);
  layers::rms_norm_heads(pool, want.data(), ld, tokens, heads, dim, w.data(), 1e-6f);
  expect_near_all(got, want);
  EXPECT_EQ(got[size_t(heads * dim)], want[size_t(heads * dim)]); // past the heads: untouched
}

TEST(emulated_model_ops, rope_matches_the_cpu_layer) {
  kernels::thread_pool pool(1);
  const int32_t tokens = 3, heads = 5, dim = 64; // 5 * 32 pairs > one pass of 128 threads
  const int64_t ld = heads * dim + 16;
  std::vector<float> got = values(size_t(tokens * ld), 5), want = got;
  const std::vector<int32_t> pos{0, 7, 300};
  std::vector<double> inv(size_t(dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / dim);
  std::vector<float> c(size_t(tokens * dim / 2)), s(c.size());
  layers::rope_angles(pos, inv, c.data(), s.data());
  emu::launch(dim3(tokens), dim3(kernels::gpu::model_ops_threads), kernels::gpu::rope_kernel,
              got.data(), ld, heads, dim, static_cast<const float*>(c.data()),
              static_cast<const float*>(s.data()));
  layers::rope(pool, want.data(), ld, tokens, heads, dim, c.data(), s.data());
  EXPECT_EQ(got, want); // the same float operations in the same order
}

// RoPE writing a bf16 KV cache's q|k|v: the bits of RoPE then the rounding
// kernel, the heads past the rotated ones (v) rounded as they are.
TEST(emulated_model_ops, bf16_rope_is_the_fp32_one_rounded) {
  namespace gpu = kernels::gpu;
  const int32_t tokens = 3, rotated = 6, heads = 8, dim = 64;
  const int64_t ld = heads * dim + 16;
  const std::vector<float> x = values(size_t(tokens * ld), 15);
  std::vector<float> c(size_t(tokens * dim / 2)), s(c.size());
  std::vector<double> inv(size_t(dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / dim);
  layers::rope_angles(std::vector<int32_t>{1, 9, 400}, inv, c.data(), s.data());
  std::vector<float> rotated_f32 = x;
  std::vector<gpu::bf16> fused(x.size()), rounded(x.size());
  emu::launch(dim3(tokens), dim3(gpu::model_ops_threads), gpu::rope_kernel, rotated_f32.data(), ld,
              rotated, dim, static_cast<const float*>(c.data()),
              static_cast<const float*>(s.data()));
  emu::launch(dim3(tokens), dim3(gpu::model_ops_threads), gpu::round_to_bf16_kernel,
              static_cast<const float*>(rotated_f32.data()), ld, rounded.data(), ld, heads * dim);
  emu::launch(dim3(tokens), dim3(gpu::model_ops_threads), gpu::rope_bf16_kernel, x.data(), ld,
              rotated, heads, dim, static_cast<const float*>(c.data()),
              static_cast<const float*>(s.data()), fused.data(), ld);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < heads * dim; ++i)
      ASSERT_EQ(fused[size_t(t * ld + i)].bits, rounded[size_t(t * ld + i)].bits) << t << " " << i;
}

TEST(emulated_model_ops, swiglu_matches_the_cpu_layer) {
  kernels::thread_pool pool(1);
  const int64_t n = 1000; // more than one grid pass with 3 blocks
  const std::vector<float> g = values(size_t(n), 6), u = values(size_t(n), 7);
  std::vector<float> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
  emu::launch(dim3(3), dim3(kernels::gpu::model_ops_threads), kernels::gpu::swiglu_kernel<float>,
              g.data(), u.data(), got.data(), n);
  layers::swiglu(pool, g.data(), u.data(), n, want.data(), n, 1, n);
  expect_near_all(got, want);
}

// The norm and SwiGLU that write bf16 (a product's input rows, one launch)
// give the bits of the fp32 kernel followed by the rounding kernel.
TEST(emulated_model_ops, bf16_norm_and_swiglu_are_the_fp32_ones_rounded) {
  namespace gpu = kernels::gpu;
  const int32_t rows = 3, n = 300;
  const int64_t ld = n + 4;
  const std::vector<float> x = values(size_t(rows * ld), 11), w = values(size_t(n), 12);
  std::vector<float> f32(x.size());
  std::vector<gpu::bf16> fused(x.size()), rounded(x.size());
  emu::launch(dim3(rows), dim3(gpu::model_ops_threads), gpu::rms_norm_kernel<float>, x.data(), ld,
              f32.data(), ld, 1, n, w.data(), 1e-6f);
  emu::launch(dim3(rows), dim3(gpu::model_ops_threads), gpu::round_to_bf16_kernel,
              static_cast<const float*>(f32.data()), ld, rounded.data(), ld, n);
  emu::launch(dim3(rows), dim3(gpu::model_ops_threads), gpu::rms_norm_kernel<gpu::bf16>, x.data(),
              ld, fused.data(), ld, 1, n, w.data(), 1e-6f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(fused[size_t(r * ld + i)].bits, rounded[size_t(r * ld + i)].bits) << r << " " << i;
  const int64_t num = 1000;
  const std::vector<float> g = values(size_t(num), 13), u = values(size_t(num), 14);
  std::vector<float> s(static_cast<size_t>(num));
  std::vector<gpu::bf16> s_fused(s.size()), s_rounded(s.size());
  emu::launch(dim3(3), dim3(gpu::model_ops_threads), gpu::swiglu_kernel<float>, g.data(), u.data(),
              s.data(), num);
  emu::launch(dim3(1), dim3(gpu::model_ops_threads), gpu::round_to_bf16_kernel,
              static_cast<const float*>(s.data()), num, s_rounded.data(), num, int32_t(num));
  emu::launch(dim3(3), dim3(gpu::model_ops_threads), gpu::swiglu_kernel<gpu::bf16>, g.data(),
              u.data(), s_fused.data(), num);
  for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s_fused[i].bits, s_rounded[i].bits) << i;
}

TEST(emulated_model_ops, add_bias_matches_the_cpu_layer) {
  kernels::thread_pool pool(1);
  const int32_t rows = 3, n = 300; // more than one pass of 128 threads
  const int64_t ld = n + 20;       // the padding after each row stays as it was
  std::vector<float> got = values(size_t(rows * ld), 9), want = got;
  const std::vector<float> bias = values(size_t(n), 10);
  emu::launch(dim3(rows), dim3(kernels::gpu::model_ops_threads), kernels::gpu::add_bias_kernel,
              got.data(), ld, bias.data(), n);
  layers::add_bias(pool, want.data(), ld, rows, n, bias.data());
  EXPECT_EQ(got, want); // one addition per element
  EXPECT_NE(got, values(size_t(rows * ld), 9));
}

TEST(emulated_model_ops, embedding_and_gather_rows) {
  const int32_t hidden = 150, vocab = 6;
  std::vector<float> table = values(size_t(vocab * hidden), 8);
  std::vector<kernels::gpu::bf16> table16;
  for (float f : table) table16.push_back(kernels::gpu::bf16(f));
  const std::vector<int32_t> ids{5, 0, 5, 2};
  std::vector<float> out(ids.size() * hidden), out16(out.size());
  emu::launch(dim3(4), dim3(kernels::gpu::model_ops_threads), kernels::gpu::embedding_kernel<float>,
              static_cast<const float*>(table.data()), ids.data(), out.data(), hidden);
  emu::launch(dim3(4), dim3(kernels::gpu::model_ops_threads),
              kernels::gpu::embedding_kernel<kernels::gpu::bf16>,
              static_cast<const kernels::gpu::bf16*>(table16.data()), ids.data(), out16.data(),
              hidden);
  for (size_t t = 0; t < ids.size(); ++t)
    for (int32_t i = 0; i < hidden; ++i) {
      const float want = table[size_t(ids[t] * hidden + i)];
      ASSERT_EQ(out[t * hidden + size_t(i)], want);
      ASSERT_EQ(out16[t * hidden + size_t(i)], bf16_to_f32(f32_to_bf16(want)));
    }
  const std::vector<int32_t> rows{3, 1};
  std::vector<float> gathered(rows.size() * hidden);
  emu::launch(dim3(2), dim3(kernels::gpu::model_ops_threads), kernels::gpu::gather_rows_kernel,
              static_cast<const float*>(out.data()), rows.data(), gathered.data(), hidden);
  for (int32_t i = 0; i < hidden; ++i) {
    EXPECT_EQ(gathered[size_t(i)], out[size_t(3 * hidden + i)]);
    EXPECT_EQ(gathered[size_t(hidden + i)], out[size_t(hidden + i)]);
  }
}

} // namespace
} // namespace kvactor::model
