#pragma once
// column_major_gemm: y = x W^T over row-major arrays (W as the checkpoint
// stores it, [out, in]) expressed as the arguments of a column-major BLAS
// gemm, C = op(A) op(B) — what cublasGemmEx takes. Host-only, no CUDA, so
// the mapping is checked in CI against OpenBLAS's column-major sgemm
// (tests/model/column_major_gemm_test.cpp).
//
// Row-major W [n, k] is column-major W^T (k x n, ld k), x [m, k] is x^T
// (k x m, ld ldx), y [m, n] is y^T (n x m, ld ldy); y^T = W x^T, so
// A = W^T transposed, B = x^T as is. T: the element type of x and W (float,
// or uint16_t for bf16 bit patterns); C is fp32 either way.

#include <cstdint>

namespace kvactor::model {

template <class T = float>
struct column_major_gemm {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0, n = 0, k = 0; // C is m x n, op(A) m x k, op(B) k x n
  const T* a = nullptr;
  int64_t lda = 0;
  const T* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
};

// x: [rows, k] rows ldx apart; w: [out, k]; y: [rows, out] rows ldy apart
template <class T>
constexpr column_major_gemm<T> row_major_linear(const T* x, int64_t ldx, int64_t rows, const T* w,
                                                int64_t out, int64_t k, float* y, int64_t ldy) {
  column_major_gemm<T> g;
  g.transpose_a = true;
  g.transpose_b = false;
  g.m = out;
  g.n = rows;
  g.k = k;
  g.a = w;
  g.lda = k;
  g.b = x;
  g.ldb = ldx;
  g.c = y;
  g.ldc = ldy;
  return g;
}

} // namespace kvactor::model
