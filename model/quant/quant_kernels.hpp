#pragma once
// y = x W^T with W block-quantised (quantized_matrix) and x quantised row
// by row to 8 bits (quantize_rows: Q8_0 blocks of its own, plus each
// block's integer sum). Every output is the chain over W's blocks
//
//   s = 0; for b: s = s + (dw[j, b] * dx[i, b]) * float(isum)
//   isum = sum over the block's 32 columns of q_x * q_w        (exact, int32)
//   (q_w the block's integer, IQ4_NL's the level iq4_levels[n])
//   y[i, j] = s            (accumulate: y[i, j] = s + y[i, j])
//
// (Q4_1 and Q5_1, whose blocks have a min mw:
//   s = s + ((dw * dx) * float(isum) + (mw * dx) * float(xsum))
//   isum of q_w = n_w, xsum = the sum of the block's q_x)
//
// or, for the K formats, over W's super-blocks (x in blocks of 256, one dx
// each):
//
//   Q2_K, Q4_K, Q5_K: s = s + ((d * dx) * float(S) - (dmin * dx) * float(M))
//         S = sum over sub-blocks j of scale_j * (sum of n_w * q_x)
//         M = sum over sub-blocks j of min_j * (sum of q_x)
//   Q3_K, Q6_K, IQ4_XS: s = s + (d * dx) * float(S)
//         S = sum over sub-blocks k of scale_k * (sum of (n_w - offset) * q_x)
//         (offset 4, 32; IQ4_XS: iq4_levels[n_w] in place of n_w - offset)
//
// in that order, each operation rounded once (no fused multiply-add). The
// integer sums are exact however an instruction set forms them, so every
// kernel gives the same bits, and a row's result does not depend on m, its
// place in x, the split over threads or the tile a kernel picks: the
// forward pass stays batch-invariant.
//
// One kernel per instruction set, chosen at run time (quant_amx.cpp,
// quant_avx512_vnni.cpp, quant_avx_vnni.cpp, quant_avx2.cpp: the only files
// built with those flags; quant_generic.cpp for any x86-64). Since every
// kernel gives the same bits, linear() may pick one by the number of rows
// (quant_product_isa).

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/quant/quantized_matrix.hpp"

namespace kvactor::model::layers {

// Rows of activations quantised in blocks of `block` values (32; 256 for
// the K formats, as their super-blocks): row i's block b holds
// q[(i * blocks + b) * block ...] (int8, -127..127) and its scale
// d[i * blocks + b]; sum holds the sums of its integers, one per 32 values
// (block 32) or per 16 (block 256), from sum[(i * blocks + b) * sums_per_block()].
struct quantized_rows {
  int64_t block = 32;
  int64_t blocks = 0; // per row
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int32_t> sum;

  // Room for m rows of k values (k a multiple of block).
  void resize(int64_t m, int64_t k, int64_t block = 32);
  int64_t sums_per_block() const { return block == 32 ? 1 : block / 16; }
  // Row i from x's k values: each block to the nearest of 255 levels of
  // amax / 127 (ties to even); a block with a NaN or infinity gets q = 0
  // and d = NaN, so its row's outputs are NaN.
  void quantize(int64_t i, const float* x);
};

// x's m rows of k values (resize, then quantize each row).
// x: [m, k] rows ldx apart
void quantize_rows(const float* x, int64_t ldx, int64_t m, int64_t k, quantized_rows& out,
                   int64_t block = 32);

// Instruction sets with an integer block product.
enum class quant_isa { generic, avx2, avx_vnni, avx512_vnni, amx_int8 };

// Those this CPU (and OS) runs, best first; generic always, last.
std::span<const quant_isa> quant_product_isas();

// The kernel for a product of m rows: AMX-INT8 from one full tile of rows
// (16) on where the CPU has it, else the best vector kernel.
quant_isa quant_product_isa(int64_t m);

// Makes quant_product_isa() answer `isa` whatever m (nullopt: the choice
// above again), for benchmarks that compare kernels through the whole
// forward pass; `isa` must be one that quant_product_isas() lists.
void force_quant_product_isa(std::optional<quant_isa> isa);

const char* isa_name(quant_isa isa);

// y[i, j] = the chain of x's row i and W's row j (+ y[i, j] when
// accumulate), for i < m and the rows j of W's groups [first_group,
// first_group + num_groups); other columns of y are left alone.
// x: quantize_rows of m rows of w.cols() values in blocks of
// quant_block_values(w.format()); y: [m, w.rows()] rows ldy apart
void quant_product(quant_isa isa, const quantized_rows& x, int64_t m, const quantized_matrix& w,
                   int64_t first_group, int64_t num_groups, float* y, int64_t ldy,
                   bool accumulate);

// The same through a kernel's table of products (quant_isa.hpp): the
// tests' emulated AMX kernel.
struct quant_products;
void quant_product_through(const quant_products& kernel, const quantized_rows& x, int64_t m,
                           const quantized_matrix& w, int64_t first_group, int64_t num_groups,
                           float* y, int64_t ldy, bool accumulate);

} // namespace kvactor::model::layers
