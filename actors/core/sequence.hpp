#pragma once
// sequence: one request's state in the scheduler — its tokens, status,
// priority and chunked-prefill progress. What the KV cache holds for it
// (block table, prefix-cache keys) is the kv_ledger's (kv_sequence.hpp).
//
//   waiting ──schedule──► running ──swap out──► swapped
//      ▲ ▲                  │  ▲                  │ │
//      │ └──preempt (recompute)┘  └─────swap in─────┘ │
//      └──────── swap-out denied (recompute) ─────────┘
//   any state ──finish (eos, max_tokens, stop, aborted)──► finished

#include "actors/core/types.hpp"
#include "kvactor/finish_reason.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace kvactor {

enum class sequence_status : uint8_t { waiting, running, swapped, finished };

std::string_view to_string(sequence_status s);
bool is_valid_transition(sequence_status from, sequence_status to);

class sequence {
public:
  // priority: higher runs first; arrival: FIFO order within a priority.
  sequence(seq_id id, std::vector<token_id> prompt, int32_t priority = 0, uint64_t arrival = 0);

  // A copy under a new id: same tokens and progress (the ledger forks the
  // blocks: kv_ledger::fork).
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
  // Drops all KV progress (preemption by recompute).
  void reset_computed() { num_computed_tokens_ = 0; }
  int32_t num_preemptions() const { return num_preemptions_; }
  void count_preemption() { ++num_preemptions_; }

private:
  seq_id id_;
  int32_t priority_;
  uint64_t arrival_;
  sequence_status status_ = sequence_status::waiting;
  finish_reason reason_ = finish_reason::none;
  std::vector<token_id> tokens_;
  int32_t num_prompt_tokens_;
  int32_t num_computed_tokens_ = 0;
  int32_t num_preemptions_ = 0;
};

} // namespace kvactor
