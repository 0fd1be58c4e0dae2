#pragma once
// Host API of the KV-cache kernels: enqueue on a stream of any device.
// Each call returns at once; the work runs in stream order. Every pointer in
// the params must be device-accessible (see params.hpp) and stay valid until
// the stream has run the call (record an event after it to know when).

#include <vector>

#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/params.hpp"

namespace kvactor::kernels {

void cache_write(device& dev, stream_id stream, const cache_write_params& p);

// Decode (p.query_start_loc == nullptr) and prefill/extend alike.
// CUDA supports head_dim 64 and 128.
void paged_attention(device& dev, stream_id stream, const paged_attention_params& p);

void copy_blocks(device& dev, stream_id stream, const copy_blocks_params& p);

// Swap: copies `pairs` (src block of `src`, dst block of `dst`) for every
// layer, K and V, on `stream` (usually streams::swap_out or swap_in), and
// returns the event of its completion; on_done runs when it completes.
// src and dst are pools of the same block shape (device and pinned host).
// CUDA: one kernel launch per swap_blocks_params::max_pairs pairs (the kernel
// reaches pinned host memory through unified addressing); CPU: one task.
event_ptr swap_blocks(device& dev, stream_id stream, const kv_cache_view& src,
                      const kv_cache_view& dst, std::vector<block_pair> pairs,
                      host_callback on_done = {});

// The device calls (CUDA: kernel launches) a swap of `num_pairs` blocks makes.
int32_t swap_calls(device_kind kind, size_t num_pairs);

} // namespace kvactor::kernels
