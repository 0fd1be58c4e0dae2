// row_major_linear: the column-major gemm arguments cublas_gemm passes to
// cublasGemmEx, run here through OpenBLAS's column-major sgemm (the same BLAS
// semantics) against a plain loop: strided rows, accumulate, one row.
#include "model/forward/column_major_gemm.hpp"

#include <gtest/gtest.h>

#include <cblas.h>

#include <cmath>
#include <vector>

namespace kvactor::model {
namespace {

void column_major_sgemm(const column_major_gemm<>& g, float beta) {
  cblas_sgemm(CblasColMajor, g.transpose_a ? CblasTrans : CblasNoTrans,
              g.transpose_b ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n), blasint(g.k),
              1.0f, g.a, blasint(g.lda), g.b, blasint(g.ldb), beta, g.c, blasint(g.ldc));
}

std::vector<float> values(size_t n, int salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * 0.61f + float(salt)) * 0.5f;
  return v;
}

struct shape {
  int64_t rows, out, k, x_pad, y_pad;
};

class column_major_gemm_test : public ::testing::TestWithParam<shape> {};

TEST_P(column_major_gemm_test, equals_x_times_w_transposed_row_major) {
  const auto [rows, out, k, x_pad, y_pad] = GetParam();
  const int64_t ldx = k + x_pad, ldy = out + y_pad;
  const std::vector<float> x = values(size_t(rows * ldx), 1), w = values(size_t(out * k), 2);
  const std::vector<float> y0 = values(size_t(rows * ldy), 3);
  for (const bool accumulate : {false, true}) {
    std::vector<float> y = y0, want = y0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < out; ++j) {
        double sum = accumulate ? y0[size_t(i * ldy + j)] : 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(x[size_t(i * ldx + p)]) * w[size_t(j * k + p)];
        want[size_t(i * ldy + j)] = float(sum);
      }
    column_major_sgemm(row_major_linear(x.data(), ldx, rows, w.data(), out, k, y.data(), ldy),
                       accumulate ? 1.0f : 0.0f);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-5) << "element " << i << (accumulate ? " (accumulate)" : "");
  }
}

INSTANTIATE_TEST_SUITE_P(shapes, column_major_gemm_test,
                         ::testing::Values(shape{1, 7, 5, 0, 0}, shape{3, 8, 16, 4, 0},
                                           shape{5, 12, 9, 3, 5}, shape{4, 6, 32, 0, 10}));

} // namespace
} // namespace kvactor::model
