#pragma once
// y = x W^T in one fixed summation order: every output is the chain
//
//   s = 0; for c = 0, 1, ..., k - 1: s = x[i, c] * W[j, c] + s
//   y[i, j] = s            (accumulate: y[i, j] = s + y[i, j])
//
// whatever m, the row's place in x, the split over threads or the tile the
// kernel picks. This makes the forward pass batch-invariant: a token's
// products do not depend on what else is in the step. bf16 W is widened
// exactly, so it gives the fp32 results of its widened values bit for bit.
//
// W is a packed_matrix: at every k, a block's 16 outputs are 16 adjacent
// values, so a kernel streams W once with plain loads (no transposes) and
// keeps up to a few dozen chains in flight. One kernel per instruction set,
// chosen at run time (linear_avx512.cpp, linear_avx2.cpp: the only files
// built with those flags; linear_generic.cpp for any x86-64). The AVX ones
// fuse each step of the chain (one rounding: fma), so they give the same
// bits as each other; the generic one multiplies, then adds.

#include <cstdint>
#include <span>

#include "model/forward/packed_matrix.hpp"

namespace kvactor::model::layers {

// Instruction sets with a fixed-order kernel.
enum class product_isa { generic, avx2, avx512 };

// Those this CPU (and OS) runs, best first; generic always, last.
std::span<const product_isa> fixed_order_isas();

const char* isa_name(product_isa isa);

// True when each step of the chain is one fused multiply-add.
bool fuses(product_isa isa);

// y[i, j] = the chain over k of x's row i and W's row j (+ y[i, j] when
// accumulate), for i < m and the rows j of W's blocks [first_block,
// first_block + num_blocks); other columns of y are left alone.
// isa: one of fixed_order_isas(); x: [m, w.cols()] rows ldx apart;
// y: [m, w.rows()] rows ldy apart
void fixed_order_product(product_isa isa, const float* x, int64_t ldx, int64_t m,
                         const packed_matrix& w, int64_t first_block, int64_t num_blocks, float* y,
                         int64_t ldy, bool accumulate);

} // namespace kvactor::model::layers
