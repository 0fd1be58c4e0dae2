// kernels.cu compiled by g++ for the CUDA shim (kernels/cuda_shim/): the
// same checks, grids and instantiations, each launch running the kernel
// through the emulator on the shim stream. Linked only into programs that
// link the shim (tests), never with nvcc's kernels.cu object.
#include <cuda_runtime_api.h> // before the emulator: see kernels/emulator/emulator.hpp

#include "kernels/params.hpp"

namespace kvactor::kernels {

// The pointers each kernel dereferences (cuda_shim::kernel_pointers).
template <class F>
void kernel_pointers(const cache_write_params& p, F&& f) {
  f(p.key, "cache_write_params::key");
  f(p.value, "cache_write_params::value");
  f(p.k_cache, "cache_write_params::k_cache");
  f(p.v_cache, "cache_write_params::v_cache");
  f(p.slot_mapping, "cache_write_params::slot_mapping");
}

template <class F>
void kernel_pointers(const paged_attention_params& p, F&& f) {
  f(p.out, "paged_attention_params::out");
  f(p.query, "paged_attention_params::query");
  f(p.k_cache, "paged_attention_params::k_cache");
  f(p.v_cache, "paged_attention_params::v_cache");
  f(p.block_tables, "paged_attention_params::block_tables");
  f(p.seq_lens, "paged_attention_params::seq_lens");
  f(p.query_start_loc, "paged_attention_params::query_start_loc");
  f(p.workspace.data, "paged_attention_params::workspace.data");
}

template <class F>
void kernel_pointers(const copy_blocks_params& p, F&& f) {
  f(p.cache, "copy_blocks_params::cache");
  f(p.pairs, "copy_blocks_params::pairs");
}

template <class F>
void kernel_pointers(const swap_blocks_params& p, F&& f) {
  f(p.src, "swap_blocks_params::src");
  f(p.dst, "swap_blocks_params::dst");
}

} // namespace kvactor::kernels

#include "kernels/cuda/kernels.cu"
