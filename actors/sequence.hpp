#pragma once
// sequence: one request's state in the scheduler — its tokens, status,
// priority, chunked-prefill progress and block table.
//
//   waiting ──schedule──► running ──swap out──► swapped
//      ▲                    │  ▲                  │
//      └──preempt (recompute)┘  └─────swap in─────┘
//   any state ──finish (eos, max_tokens, stop, aborted)──► finished

#include "actors/block_table.hpp"
#include "actors/types.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace kvactor {

enum class sequence_status : uint8_t { waiting, running, swapped, finished };
enum class finish_reason : uint8_t { none, eos, max_tokens, stop, aborted };

std::string_view to_string(sequence_status s);
std::string_view to_string(finish_reason r);
bool is_valid_transition(sequence_status from, sequence_status to);

class sequence {
public:
  // priority: higher runs first; arrival: FIFO order within a priority.
  sequence(seq_id id, std::vector<token_id> prompt, int32_t block_size, int32_t priority = 0,
           uint64_t arrival = 0);

  // A copy under a new id: same tokens, progress and block table (whose
  // blocks the caller must retain; see block_manager::fork).
  sequence fork(seq_id child_id, uint64_t arrival) const;

  seq_id id() const { return id_; }
  int32_t priority() const { return priority_; }
  uint64_t arrival() const { return arrival_; }

  sequence_status status() const { return status_; }
  bool is_finished() const { return status_ == sequence_status::finished; }
  finish_reason reason() const { return reason_; }
  // Asserts that the transition is one the diagram above allows.
  void set_status(sequence_status to);
  void finish(finish_reason why);

  // Prompt and generated tokens, in one array.
  std::span<const token_id> tokens() const { return tokens_; }
  std::span<const token_id> prompt() const { return {tokens_.data(), size_t(num_prompt_tokens_)}; }
  std::span<const token_id> output() const {
    return std::span<const token_id>(tokens_).subspan(num_prompt_tokens_);
  }
  int32_t num_tokens() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens_; }
  token_id last_token() const { return tokens_.back(); }
  void append_token(token_id t);

  // Tokens whose K/V are in the cache; the rest still need a forward pass
  // (a prefill in chunks, or the one new token of a decode step).
  int32_t num_computed_tokens() const { return num_computed_tokens_; }
  int32_t num_uncomputed_tokens() const { return num_tokens() - num_computed_tokens_; }
  void add_computed_tokens(int32_t n);

  // The prefix-cache key of each full block of tokens(), chained from the
  // first: block_hashes()[i] covers tokens [0, (i + 1) * block_size).
  std::span<const block_hash> block_hashes() const { return block_hashes_; }
  block_hash parent_hash(int32_t block_index) const;
  // Leading blocks of the table registered in (or taken from) the prefix cache.
  int32_t num_cached_blocks() const { return num_cached_blocks_; }
  void set_num_cached_blocks(int32_t n) { num_cached_blocks_ = n; }

  block_table& table() { return table_; }
  const block_table& table() const { return table_; }

  // Drops all KV progress, e.g. after preemption by recompute; the table must
  // have been released first.
  void reset_computed();
  int32_t num_preemptions() const { return num_preemptions_; }
  void count_preemption() { ++num_preemptions_; }

private:
  void hash_full_blocks();

  seq_id id_;
  int32_t priority_;
  uint64_t arrival_;
  sequence_status status_ = sequence_status::waiting;
  finish_reason reason_ = finish_reason::none;
  std::vector<token_id> tokens_;
  int32_t num_prompt_tokens_;
  int32_t num_computed_tokens_ = 0;
  std::vector<block_hash> block_hashes_;
  int32_t num_cached_blocks_ = 0;
  block_table table_;
  int32_t num_preemptions_ = 0;
};

} // namespace kvactor
