// The fixed-order products over packed matrices (packed_matrix.hpp), written
// once for every instruction set. The including file (linear_avx512.cpp,
// linear_avx2.cpp, linear_generic.cpp: one per set of compiler flags)
// defines, in an anonymous namespace before including this:
//
//   struct vec {
//     using reg = ...;                    // a vector of fp32 lanes
//     static constexpr int row_regs;      // regs per row of a block (16 values)
//     static constexpr int few_rows_blocks[3];  // blocks per tile for 1, 2 rows of x ([0] unused)
//     static constexpr int many_rows, many_rows_blocks;  // the tile for 3 rows and more
//     static reg zero();
//     static reg broadcast(const float* x);
//     static reg chain(reg w, reg x, reg acc);   // one step of the chain: acc + w * x
//     static void load_row(const float* p, reg (&r)[row_regs]);
//     static void load_row(const uint16_t* p, reg (&r)[row_regs]);
//     // y[0, n) = the row's outputs (+ y when accumulate), in the order
//     // load_row(const T*) left them; n <= 16
//     template <class T>
//     static void store_row(const reg (&r)[row_regs], float* y, int64_t n, bool accumulate);
//   };
//
// Every output is one chain over k = 0, 1, ... in every tile shape, so the
// tiles change speed, never bits.
// NOTE: everything here has internal linkage (see the including files),
// but for the file's two entry points (linear_isa.hpp), defined at the end.

namespace {

constexpr int64_t block_rows = 16;

inline int64_t at_most(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// R rows of x against NB consecutive blocks of W (n <= 16 NB outputs of them).
template <int R, int NB, class T>
void tile(const float* x, int64_t ldx, const T* w, int64_t k, int64_t n, float* y, int64_t ldy,
          bool accumulate) {
  constexpr int V = vec::row_regs;
  // NOTE: every loop over acc is unrolled, so that acc lives in registers.
  typename vec::reg acc[R][NB][V];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        acc[i][j][v] = vec::zero();
  for (int64_t c = 0; c < k; ++c) {
    typename vec::reg wv[NB][V];
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j)
      vec::load_row(w + (j * k + c) * block_rows, wv[j]);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const typename vec::reg xb = vec::broadcast(x + i * ldx + c);
#pragma GCC unroll 8
      for (int j = 0; j < NB; ++j)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          acc[i][j][v] = vec::chain(wv[j][v], xb, acc[i][j][v]);
    }
  }
  // NOTE: stored through a copy: a reference into acc would keep acc in
  // memory for the whole loop above.
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
      if (n <= block_rows * j)
        break;
      typename vec::reg row[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        row[v] = acc[i][j][v];
      vec::template store_row<T>(row, y + i * ldy + block_rows * j,
                                 at_most(block_rows, n - block_rows * j), accumulate);
    }
}

// R rows of x against every block, NB at a time, then the rest one by one.
template <int R, int NB, class T>
void sweep(const float* x, int64_t ldx, const T* w, int64_t k, int64_t n, float* y, int64_t ldy,
           bool accumulate) {
  const int64_t num_blocks = (n + block_rows - 1) / block_rows;
  int64_t b = 0;
  for (; b + NB <= num_blocks; b += NB)
    tile<R, NB>(x, ldx, w + b * block_rows * k, k, at_most(block_rows * NB, n - block_rows * b),
                y + block_rows * b, ldy, accumulate);
  for (; b < num_blocks; ++b)
    tile<R, 1>(x, ldx, w + b * block_rows * k, k, at_most(block_rows, n - block_rows * b),
               y + block_rows * b, ldy, accumulate);
}

// The last `rows` (< R) rows of x against NB blocks.
template <int R, int NB, class T>
void tail_rows(int64_t rows, const float* x, int64_t ldx, const T* w, int64_t k, int64_t n,
               float* y, int64_t ldy, bool accumulate) {
  if constexpr (R > 0) {
    if (rows == R)
      tile<R, NB>(x, ldx, w, k, n, y, ldy, accumulate);
    else
      tail_rows<R - 1, NB>(rows, x, ldx, w, k, n, y, ldy, accumulate);
  }
}

// All m rows of x against NB blocks: tiles of R rows, then the rest. The
// blocks stay in cache while the tiles pass over them.
template <int R, int NB, class T>
void group(const float* x, int64_t ldx, int64_t m, const T* w, int64_t k, int64_t n, float* y,
           int64_t ldy, bool accumulate) {
  int64_t i = 0;
  for (; i + R <= m; i += R)
    tile<R, NB>(x + i * ldx, ldx, w, k, n, y + i * ldy, ldy, accumulate);
  tail_rows<R - 1, NB>(m - i, x + i * ldx, ldx, w, k, n, y + i * ldy, ldy, accumulate);
}

template <class T>
void product(const float* x, int64_t ldx, int64_t m, const T* w, int64_t k, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  if (m == 1)
    return sweep<1, vec::few_rows_blocks[1]>(x, ldx, w, k, n, y, ldy, accumulate);
  if (m == 2)
    return sweep<2, vec::few_rows_blocks[2]>(x, ldx, w, k, n, y, ldy, accumulate);
  constexpr int R = vec::many_rows, NB = vec::many_rows_blocks;
  const int64_t num_blocks = (n + block_rows - 1) / block_rows;
  int64_t b = 0;
  for (; b + NB <= num_blocks; b += NB)
    group<R, NB>(x, ldx, m, w + b * block_rows * k, k, at_most(block_rows * NB, n - block_rows * b),
                 y + block_rows * b, ldy, accumulate);
  for (; b < num_blocks; ++b)
    group<R, 1>(x, ldx, m, w + b * block_rows * k, k, at_most(block_rows, n - block_rows * b),
                y + block_rows * b, ldy, accumulate);
}

} // namespace

void product(const float* x, int64_t ldx, int64_t m, const float* w, int64_t k, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  product<float>(x, ldx, m, w, k, n, y, ldy, accumulate);
}

void product(const float* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k, int64_t n,
             float* y, int64_t ldy, bool accumulate) {
  product<uint16_t>(x, ldx, m, w, k, n, y, ldy, accumulate);
}
