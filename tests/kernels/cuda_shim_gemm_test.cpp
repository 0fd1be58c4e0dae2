// The CUDA shim's cublasGemmEx (kernels/cuda_shim/cublas.cpp) against a
// reference computed here in double: bf16 A and B with fp32 C (what the
// CUDA forward pass's bf16 products call), every transpose, leading
// dimensions larger than the operands, alpha and beta, on the handle's
// stream; and the type combinations and arguments cuBLAS refuses.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda_shim/shim.hpp"
#include "recorded_violations.hpp"

namespace kvactor::cuda_shim {
namespace {

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

// bf16 bits of x, truncated (the test's values are exact in bf16 anyway).
uint16_t bf16_bits(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return static_cast<uint16_t>(u >> 16);
}
double from_bits(uint16_t b) {
  const uint32_t u = uint32_t{b} << 16;
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

class shim_gemm : public ::testing::Test {
protected:
  void SetUp() override {
    set_settings(settings{.seed = 11, .max_delay_us = 500});
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ASSERT_EQ(cublasCreate(&handle_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasSetStream(handle_, stream_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cublasDestroy(handle_), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
  }

  // A copy of `host` in device memory (uploaded through pinned memory on the stream).
  void* upload(const void* host, size_t bytes) {
    void* dev = nullptr;
    void* pinned = nullptr;
    EXPECT_EQ(cudaMalloc(&dev, bytes), cudaSuccess);
    EXPECT_EQ(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault), cudaSuccess);
    std::memcpy(pinned, host, bytes);
    EXPECT_EQ(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, stream_), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
    return dev;
  }
  std::vector<float> download(const void* dev, size_t num) {
    void* pinned = nullptr;
    EXPECT_EQ(cudaHostAlloc(&pinned, num * sizeof(float), cudaHostAllocDefault), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(pinned, dev, num * sizeof(float), cudaMemcpyDeviceToHost, stream_),
              cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    std::vector<float> out(static_cast<const float*>(pinned),
                           static_cast<const float*>(pinned) + num);
    EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
    return out;
  }

  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

// (A transposed, B transposed)
class cuda_shim_gemm_test : public shim_gemm,
                            public ::testing::WithParamInterface<std::tuple<bool, bool>> {};

// C = alpha op(A) op(B) + beta C, column-major, m 5, n 3, k 7; lda, ldb,
// ldc each larger than the operand's rows, the gaps filled with values a
// product must not read (A, B) or write (C).
TEST_P(cuda_shim_gemm_test, bf16_operands_fp32_result_match_a_double_reference) {
  const auto [ta, tb] = GetParam();
  const int m = 5, n = 3, k = 7;
  const int rows_a = ta ? k : m, cols_a = ta ? m : k, lda = rows_a + 3;
  const int rows_b = tb ? n : k, cols_b = tb ? k : n, ldb = rows_b + 2;
  const int ldc = m + 4;
  std::vector<uint16_t> a(size_t(lda * cols_a), bf16_bits(1e30f)),
    b(size_t(ldb * cols_b), bf16_bits(-1e30f));
  // NOTE: values with up to 8 significant bits, some tiny and some large, so
  // an operand read as the wrong element or not widened shows.
  for (int c = 0; c < cols_a; ++c)
    for (int r = 0; r < rows_a; ++r)
      a[size_t(c * lda + r)] =
        bf16_bits(float((r * 7 + c * 3) % 13 - 6) * 0.0078125f * float(1 + c));
  for (int c = 0; c < cols_b; ++c)
    for (int r = 0; r < rows_b; ++r)
      b[size_t(c * ldb + r)] = bf16_bits(float((r * 5 + c * 11) % 17 - 8) * 1.5f);
  std::vector<float> c0(size_t(ldc * n));
  for (size_t i = 0; i < c0.size(); ++i) c0[i] = float(i % 9) - 4.0f;
  void* da = upload(a.data(), a.size() * 2);
  void* db = upload(b.data(), b.size() * 2);
  void* dc = upload(c0.data(), c0.size() * 4);
  const float alpha = 0.5f, beta = 2.0f;
  ASSERT_EQ(cublasGemmEx(handle_, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m,
                         n, k, &alpha, da, CUDA_R_16BF, lda, db, CUDA_R_16BF, ldb, &beta, dc,
                         CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  const std::vector<float> got = download(dc, c0.size());
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double want = 0;
      for (int l = 0; l < k; ++l) {
        const double av = from_bits(ta ? a[size_t(i * lda + l)] : a[size_t(l * lda + i)]);
        const double bv = from_bits(tb ? b[size_t(l * ldb + j)] : b[size_t(j * ldb + l)]);
        want += av * bv;
      }
      want = alpha * want + beta * c0[size_t(j * ldc + i)];
      EXPECT_NEAR(got[size_t(j * ldc + i)], want, 1e-5 * (1 + std::abs(want))) << i << "," << j;
    }
    for (int i = m; i < ldc; ++i)
      EXPECT_EQ(got[size_t(j * ldc + i)], c0[size_t(j * ldc + i)]) << "gap " << i << "," << j;
  }
  for (void* p : {da, db, dc}) EXPECT_EQ(cudaFree(p), cudaSuccess);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
  return std::string(std::get<0>(info.param) ? "At" : "A") + "_" +
         (std::get<1>(info.param) ? "Bt" : "B");
}

INSTANTIATE_TEST_SUITE_P(transposes, cuda_shim_gemm_test,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()), case_name);

TEST_F(shim_gemm, types_cublas_refuses_and_bad_arguments) {
  const int m = 4, n = 4, k = 4;
  std::vector<float> zeros(64, 0.0f);
  void* d = upload(zeros.data(), zeros.size() * 4);
  const float alpha = 1.0f, beta = 0.0f;
  const auto gemm = [&](cudaDataType at, cudaDataType bt, cudaDataType ct,
                        cublasComputeType_t compute, int lda) {
    return cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d, at, lda, d, bt, k,
                        &beta, d, ct, m, compute, CUBLAS_GEMM_DEFAULT);
  };
  {
    recorded_violations v;
    // Mixed A and B types: cuBLAS has no such combination.
    EXPECT_EQ(gemm(CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, m),
              CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(gemm(CUDA_R_32F, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, m),
              CUBLAS_STATUS_NOT_SUPPORTED);
    // fp32 A and B with a bf16 C, and bf16 with an fp16 C.
    EXPECT_EQ(gemm(CUDA_R_32F, CUDA_R_32F, CUDA_R_16BF, CUBLAS_COMPUTE_32F, m),
              CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(gemm(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16F, CUBLAS_COMPUTE_32F, m),
              CUBLAS_STATUS_NOT_SUPPORTED);
    // bf16 inputs with 16-bit compute.
    EXPECT_EQ(gemm(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_16F, m),
              CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(v.count(), 0u); // refusals, not broken rules
    // lda below A's rows.
    EXPECT_EQ(gemm(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, m - 1),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(v.count(), 0u);
    // Valid in cuBLAS (bf16 C) but not modelled: reported, not computed.
    EXPECT_EQ(gemm(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, m),
              CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(v.count(), 1u);
    // An lda that takes A past its allocation (16 floats from the end).
    EXPECT_EQ(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha,
                           static_cast<float*>(d) + 48, CUDA_R_32F, 8, d, CUDA_R_32F, k, &beta, d,
                           CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(v.count(), 2u);
  }
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

} // namespace
} // namespace kvactor::cuda_shim
