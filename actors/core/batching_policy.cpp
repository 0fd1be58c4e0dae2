#include "actors/core/batching_policy.hpp"

#include "actors/core/request_blocks.hpp"

#include <algorithm>

namespace kvactor {

batching_policy::batching_policy(const scheduler_config& config, int32_t num_device_blocks,
                                 int32_t block_size)
  : config_(config), num_device_blocks_(num_device_blocks), block_size_(block_size),
    continuous_(config.batching == batching_mode::continuous &&
                config.reservation == kv_reservation::paged) {
}

int32_t batching_policy::blocks_needed(const sequence& seq, const generation_params& params) const {
  int32_t len = seq.num_tokens() + params.max_tokens;
  if (config_.reservation == kv_reservation::contiguous)
    len = std::max(len, config_.max_model_len);
  return (len + block_size_ - 1) / block_size_;
}

int64_t batching_policy::request_blocks_needed(const sequence& seq, const generation_params& params,
                                               int32_t num_choices) const {
  if (config_.reservation == kv_reservation::contiguous)
    return blocks_needed(seq, params); // one choice (contiguous never forks)
  return num_request_blocks(seq.num_tokens(), params.max_tokens, num_choices, block_size_);
}

std::string batching_policy::what_is_needed(const sequence& seq, const generation_params& params,
                                            int32_t num_choices) const {
  if (config_.reservation == kv_reservation::contiguous)
    return "a contiguous reservation of max_model_len " + std::to_string(config_.max_model_len) +
           " tokens";
  std::string what = std::to_string(seq.num_tokens()) + " prompt tokens + " +
                     std::to_string(params.max_tokens) + " max tokens";
  if (num_choices > 1)
    what = std::to_string(num_choices) + " choices of " + what + ", sharing the prompt's " +
           std::to_string((seq.num_tokens() - 1) / block_size_) + " full blocks";
  return what;
}

bool batching_policy::opens_batch() const {
  return config_.batching != batching_mode::continuous && num_in_batch_ == 0;
}

void batching_policy::open_batch(std::span<row* const> order) {
  for (row* r : order) {
    if (num_in_batch_ == config_.max_num_seqs)
      break;
    r->in_batch = true;
    ++num_in_batch_;
  }
}

bool batching_policy::between_batches() const {
  return config_.batching != batching_mode::continuous && num_in_batch_ == num_padding_;
}

bool batching_policy::admissible(const row& r, const sequence& seq,
                                 const generation_params& params, int32_t& num_reserving) const {
  if (config_.batching != batching_mode::continuous && !r.in_batch)
    return false;
  if (config_.reservation == kv_reservation::contiguous && r.num_reserved_blocks == 0) {
    const int32_t need = blocks_needed(seq, params);
    if (num_reserving + need > num_device_blocks_)
      return false;
    num_reserving += need;
  }
  return true;
}

void batching_policy::granted(row& r, const sequence& seq, const generation_params& params) {
  if (config_.reservation == kv_reservation::contiguous && r.num_reserved_blocks == 0) {
    r.num_reserved_blocks = blocks_needed(seq, params);
    num_reserved_blocks_ += r.num_reserved_blocks;
  }
}

bool batching_policy::pads(row& r, finish_reason why) {
  // NOTE: the batch's last live sequence ends for real; the padding rows go
  // at the next step's start, outside this step's bookkeeping.
  if (config_.batching != batching_mode::padded || num_in_batch_ - num_padding_ == 1)
    return false;
  r.padded_end = why;
  ++num_padding_;
  return true;
}

void batching_policy::left(const row& r) {
  num_reserved_blocks_ -= r.num_reserved_blocks;
  num_in_batch_ -= r.in_batch;
  num_padding_ -= r.padding();
}

} // namespace kvactor
