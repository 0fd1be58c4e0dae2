#pragma once
// y = x W^T with bf16 x and W and fp32 sums: the products of
// `--activations=bf16`, on the CPU's bf16 dot-product instructions.
//
// Every output is a chain over the pairs of columns, p = 0, 1, ...:
//
//   s = 0; for p: s = s + x[i, 2p] W[j, 2p] + x[i, 2p + 1] W[j, 2p + 1]
//
// A product of two bf16 values is exact in fp32; how the two products of a
// pair are added to s is each instruction's own (AMX's tdpbf16ps,
// AVX512_BF16's vdpbf16ps; the portable kernel adds the odd one, then the
// even one, as Intel documents vdpbf16ps). So the kernels agree within
// fp32 rounding, not bit for bit, but each is batch-invariant: a row's
// outputs do not depend on m, the row's place in x, the split over threads
// or the tile the kernel picks.
//
// W is a packed_matrix in the pair layout; x is rounded to bf16 by the
// caller (layers::linear) into rows of W's stored columns, zero-padded.

#include <cstdint>
#include <span>

#include "model/forward/packed_matrix.hpp"

namespace kvactor::model::layers {

// Instruction sets with a bf16 pair product.
enum class pair_isa { generic, avx512_bf16, amx };

// Those this CPU (and OS) runs, best first; generic always, last. AMX
// counts only once the OS has granted this process its tile data.
std::span<const pair_isa> pair_product_isas();

const char* isa_name(pair_isa isa);

// Rows of x the kernels read for m rows: m rounded up to 16 (AMX tiles).
int64_t pair_rows(int64_t m);

// y[i, j] = the pair chain of x's row i and W's row j (+ y[i, j] when
// accumulate), for i < m and the rows j of W's blocks [first_block,
// first_block + num_blocks); other columns of y are left alone.
// isa: one of pair_product_isas(); x: [pair_rows(m), w.stored_cols()] bf16
// rows ldx apart (ldx >= w.stored_cols()); y: [m, w.rows()] rows ldy apart
void pair_product(pair_isa isa, const uint16_t* x, int64_t ldx, int64_t m, const packed_matrix& w,
                  int64_t first_block, int64_t num_blocks, float* y, int64_t ldy, bool accumulate);

} // namespace kvactor::model::layers
