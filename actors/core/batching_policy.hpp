#pragma once
// batching_policy: the comparison modes' rules, which the scheduler consults
// at admission, at each step's start and at each end. They exist to measure
// what continuous batching and paging buy (scheduler_config.hpp):
//   fixed      a batch of up to max_num_seqs sequences is admitted only
//              when the last batch has ended;
//   padded     as fixed, and a sequence that ends computes on in its batch
//              as a padding row (its request has its end; the row's tokens
//              go nowhere) until the batch's last end, until memory runs
//              short (a padding row is the first to go) or max_model_len;
//   contiguous a sequence is admitted only while the device pool can hold
//              max_model_len slots for it and every other admitted one.
// Continuous batching over paged blocks, the runtime's own mode, passes
// every rule. No CAF in here.

#include "actors/core/scheduler_config.hpp"
#include "actors/core/sequence.hpp"
#include "actors/core/step.hpp"

#include <span>
#include <string>

namespace kvactor {

class batching_policy {
public:
  // A sequence's standing under the policy.
  struct row {
    bool in_batch = false;                          // a member of the current batch
    finish_reason padded_end = finish_reason::none; // padding: its request's end (sent)
    int32_t num_reserved_blocks = 0;                // contiguous: from its first grant to its end
    bool padding() const { return padded_end != finish_reason::none; }
  };

  batching_policy(const scheduler_config& config, int32_t num_device_blocks, int32_t block_size);

  // Continuous batching over paged blocks: every rule passes (and requests
  // of several choices may fork).
  bool continuous() const { return continuous_; }

  // The blocks a sequence needs to run at all.
  int32_t blocks_needed(const sequence& seq, const generation_params& params) const;
  // The blocks a request of `num_choices` choices of `seq` needs to run at
  // all, its choices sharing the prompt's (request_blocks.hpp), and what they
  // hold, for the refusal of one that could never fit.
  int64_t request_blocks_needed(const sequence& seq, const generation_params& params,
                                int32_t num_choices) const;
  std::string what_is_needed(const sequence& seq, const generation_params& params,
                             int32_t num_choices) const;

  // Fixed or padded batching between batches: the step opens the next one
  // from `order`, the rows in scheduling order (at most max_num_seqs join).
  bool opens_batch() const;
  void open_batch(std::span<row* const> order);
  // Fixed or padded batching, the last batch over (padding rows alone).
  bool between_batches() const;

  // Whether the sequence may be scheduled this step; `num_reserving` starts
  // at num_reserved_blocks() and counts the reservations admitted so far.
  bool admissible(const row& r, const sequence& seq, const generation_params& params,
                  int32_t& num_reserving) const;
  // Its blocks were granted: a contiguous reservation starts at the first.
  void granted(row& r, const sequence& seq, const generation_params& params);
  // It ended by eos or max_tokens: true when its row computes on as padding
  // (padded batching, unless it was the batch's last live row).
  bool pads(row& r, finish_reason why);
  // The sequence left the scheduler.
  void left(const row& r);

  int32_t num_padding_rows() const { return num_padding_; }
  // Device blocks held by contiguous reservations (0 when paged).
  int32_t num_reserved_blocks() const { return num_reserved_blocks_; }

private:
  scheduler_config config_;
  int32_t num_device_blocks_;
  int32_t block_size_;
  bool continuous_;
  int32_t num_in_batch_ = 0;
  int32_t num_padding_ = 0; // padding rows among num_in_batch_
  int32_t num_reserved_blocks_ = 0;
};

} // namespace kvactor
