#pragma once
// CPU kernels of the CPU device: the serving path when there is no GPU.
// Each call runs to completion on the calling thread (a stream worker) and
// spreads its work over `pool`; the device wraps them into stream tasks.

#include <cstdint>
#include <span>

#include "kernels/kv_cache.hpp"
#include "kernels/params.hpp"
#include "kernels/thread_pool.hpp"

namespace kvactor::kernels::cpu {

// Instruction sets of the attention inner loops, picked at run time.
// avx512_bf16 differs from avx512 only for bf16 caches (vdpbf16ps for Q.K).
enum class isa { generic, avx512, avx512_bf16 };
isa best_isa();  // the best the CPU and OS support (AVX-512 = F/BW/VL/DQ)
const char* isa_name(isa i);

void cache_write(const cache_write_params& p, thread_pool& pool);

void paged_attention(const paged_attention_params& p, thread_pool& pool, isa simd = best_isa());

void copy_blocks(const copy_blocks_params& p, thread_pool& pool);

// Copies blocks between two pools of the same shape but num_blocks (device
// to host for swap-out, host to device for swap-in), every layer, K and V.
void swap_blocks(const kv_cache_view& src, const kv_cache_view& dst,
                 std::span<const block_pair> pairs, thread_pool& pool);

} // namespace kvactor::kernels::cpu
