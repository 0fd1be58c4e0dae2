// The bf16 pair products (pair_kernels.hpp), AMX: 16 rows of x by 32
// columns (one A tile) times 16 pairs of a block of W (one B tile, in the
// pair layout as stored) adds into 16 x 16 fp32 chains (one C tile) in one
// tdpbf16ps. Eight tiles: four C, and either one A with three B in turn (a
// single row tile, four blocks) or two A with two B (two by two).
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); everything else has internal linkage. The tile
// intrinsics take literal tile numbers (they are spelled into the
// instruction), hence the written-out passes below.
#include <immintrin.h>

#include "model/forward/pair_isa.hpp"
#include "model/tile_config.hpp"

namespace kvactor::model::layers::amx {
namespace {

constexpr int64_t block_rows = 16;
constexpr int64_t k_step = 32;     // columns of x per A tile (64 bytes of bf16)
constexpr int64_t pair_row = 64;   // bytes of one pair row of a block (16 lanes x 2 bf16)

// Every tile 64 bytes wide: A [rows, 32 bf16], B [16 pairs, 16 x 2 bf16],
// C [rows, 16 fp32]: tmm0-4 (the C tiles and one_row_tile's A) `rows` high,
// the rest 16 (two_row_tiles runs on full tiles only).
// NOTE: fewer rows than 16 when x has fewer (a decode step of a few
// sequences): a tile operation's cost and its loads shrink with its rows,
// and each row's sums are the same whatever the tile's height.
constexpr tile_config tiles(uint8_t rows) {
  tile_config c;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = t < 5 ? rows : 16;
  }
  return c;
}

struct args {
  const uint16_t* x; // the pass's first row
  int64_t ldx;
  int64_t rows;      // valid rows from x (the rest of the tiles is padding)
  const uint16_t* w; // the pass's first block
  int64_t k;
  int64_t n;         // valid outputs from w's first block
  float* y;
  int64_t ldy;
  bool accumulate;
};

const uint16_t* block(const args& a, int64_t b, int64_t kk) {
  return a.w + (b * a.k + kk) * block_rows;
}

// C tile [16, 16] in `c` -> y rows [row0, row0 + 16) and outputs of block b.
void write_out(const args& a, const float (&c)[16][16], int64_t row0, int64_t b) {
  const int64_t cols = a.n - b * block_rows < block_rows ? a.n - b * block_rows : block_rows;
  for (int64_t i = 0; i < 16 && row0 + i < a.rows; ++i) {
    float* out = a.y + (row0 + i) * a.ldy + b * block_rows;
    for (int64_t l = 0; l < cols; ++l) out[l] = a.accumulate ? c[i][l] + out[l] : c[i][l];
  }
}

// C tiles tmm0-3 to zero.
void zero_accumulators() {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

// One row tile against nb <= 4 blocks: C tmm0-3, A tmm4, B tmm5, 6, 7, 5.
void one_row_tile(const args& a, int nb) {
  zero_accumulators();
  const long sx = a.ldx * 2;
  for (int64_t kk = 0; kk < a.k; kk += k_step) {
    _tile_loadd(4, a.x + kk, sx);
    _tile_loadd(5, block(a, 0, kk), pair_row);
    _tile_dpbf16ps(0, 4, 5);
    if (nb > 1) {
      _tile_loadd(6, block(a, 1, kk), pair_row);
      _tile_dpbf16ps(1, 4, 6);
    }
    if (nb > 2) {
      _tile_loadd(7, block(a, 2, kk), pair_row);
      _tile_dpbf16ps(2, 4, 7);
    }
    if (nb > 3) {
      _tile_loadd(5, block(a, 3, kk), pair_row);
      _tile_dpbf16ps(3, 4, 5);
    }
  }
  alignas(64) float c[16][16];
  _tile_stored(0, c, 64);
  write_out(a, c, 0, 0);
  if (nb > 1) {
    _tile_stored(1, c, 64);
    write_out(a, c, 0, 1);
  }
  if (nb > 2) {
    _tile_stored(2, c, 64);
    write_out(a, c, 0, 2);
  }
  if (nb > 3) {
    _tile_stored(3, c, 64);
    write_out(a, c, 0, 3);
  }
}

// Two row tiles against nb <= 2 blocks: C tmm0-3 (row tile r, block b at
// 2 r + b), A tmm4, 5, B tmm6, 7.
void two_row_tiles(const args& a, int nb) {
  zero_accumulators();
  const long sx = a.ldx * 2;
  for (int64_t kk = 0; kk < a.k; kk += k_step) {
    _tile_loadd(4, a.x + kk, sx);
    _tile_loadd(5, a.x + 16 * a.ldx + kk, sx);
    _tile_loadd(6, block(a, 0, kk), pair_row);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    if (nb > 1) {
      _tile_loadd(7, block(a, 1, kk), pair_row);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  alignas(64) float c[16][16];
  _tile_stored(0, c, 64);
  write_out(a, c, 0, 0);
  _tile_stored(2, c, 64);
  write_out(a, c, 16, 0);
  if (nb > 1) {
    _tile_stored(1, c, 64);
    write_out(a, c, 0, 1);
    _tile_stored(3, c, 64);
    write_out(a, c, 16, 1);
  }
}

} // namespace

void product(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k,
             int64_t n, float* y, int64_t ldy, bool accumulate) {
  const int64_t num_blocks = (n + block_rows - 1) / block_rows;
  const int64_t row_tiles = (m + 15) / 16;
  static constexpr tile_config full = tiles(16);
  const tile_config few = tiles(static_cast<uint8_t>(m < 16 ? m : 16));
  _tile_loadconfig(row_tiles == 1 ? &few : &full);
  // NOTE: blocks outside, rows inside: the blocks of a pass stay in cache
  // while every row tile passes over them.
  const int blocks_per_pass = row_tiles == 1 ? 4 : 2;
  for (int64_t b = 0; b < num_blocks; b += blocks_per_pass) {
    const int nb =
      static_cast<int>(num_blocks - b < blocks_per_pass ? num_blocks - b : blocks_per_pass);
    args a{x,   ldx,       m, w + b * block_rows * k, k, n - b * block_rows, y + b * block_rows,
           ldy, accumulate};
    int64_t t = 0;
    for (; t + 2 <= row_tiles; t += 2) {
      a.x = x + t * 16 * ldx;
      a.y = y + t * 16 * ldy + b * block_rows;
      a.rows = m - t * 16;
      two_row_tiles(a, nb);
    }
    if (t < row_tiles) {
      a.x = x + t * 16 * ldx;
      a.y = y + t * 16 * ldy + b * block_rows;
      a.rows = m - t * 16;
      one_row_tile(a, nb);
    }
  }
  _tile_release();
}

} // namespace kvactor::model::layers::amx
