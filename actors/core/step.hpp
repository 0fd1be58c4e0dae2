#pragma once
// What crosses from the scheduler to the executor and back for one step (one
// forward pass), and what the scheduler reports about each sequence. Plain
// structs: the executor never sees the scheduler's queues.

#include "kvactor/constraint.hpp"
#include "kvactor/errc.hpp"
#include "actors/core/sequence.hpp"
#include "actors/core/table_delta.hpp"
#include "actors/core/token_list.hpp"
#include "actors/core/types.hpp"
#include "model/sampling_params.hpp"
#include "model/token_logprobs.hpp"

#include <optional>
#include <vector>

namespace kvactor {

// What a request asks of generation, as the scheduler and executor use it.
struct generation_params {
  int32_t max_tokens = 16;
  bool ignore_eos = false;
  model::sampling_params sampling;
  int32_t num_logprobs = -1; // -1: none; else the token's and this many alternatives'
  std::vector<token_id> stop_token_ids{}; // a sampled one ends the sequence (finish_reason stop)
  output_constraint constraint{};         // what the text must be (the runner masks the logits)
};

// One sequence's share of a step: a prefill chunk or a decode token.
//
// The executor keeps each live sequence's block table from step to step and
// gets only its change (table_delta.hpp): blocks added since the sequence's
// last step (after a copy-on-write, the table again from the copied block),
// or the whole table where it starts over (first step, swap-in into new
// blocks, recompute after preemption). Once the change is applied
// the table covers positions [0, start + tokens.size()). A table is dropped
// when its sequence is in `released`.
struct scheduled_sequence {
  seq_id id = 0;
  int32_t start = 0;                 // position of tokens[0]; K/V of [0, start) are cached
  token_list tokens;                 // the tokens whose K/V this step computes
  table_delta blocks;                // the change to the sequence's block table
  bool sample = false;               // sample a token from the last position's logits
  model::sampling_params sampling;
  int32_t num_output_tokens = 0;     // tokens generated so far: the sampler's step
  // >= 0: the sampled token's logprobs and this many alternatives'
  int32_t num_logprobs = -1;
  // The prompt, in the first plan of a sequence whose sampling penalises
  // repeats: the runner keeps the sequence's sampling history from then on
  // (model/sampling_history.hpp), adding each token it samples, until the
  // sequence is released.
  token_list history_prompt{};
  // The constraint, in the first plan of a constrained sequence: the runner
  // keeps the sequence's place in its grammar from then on, moving it past
  // each token it samples, until the sequence is released.
  output_constraint constraint{};
};

struct step_plan {
  uint64_t step_id = 0;
  std::vector<block_copy> copies;        // copy-on-write, before the forward pass
  std::vector<scheduled_sequence> seqs;
  std::vector<seq_id> released;          // ended since the last plan: drop their state and tables
  bool empty() const { return seqs.empty() && copies.empty(); }
};

struct sampled_token {
  seq_id id = 0;
  token_id token = 0;
  model::token_logprobs logprobs{}; // when its sequence asked (num_logprobs >= 0)
  bool must_end = false; // the sequence's constraint allows nothing after this token
  // The row's logits held no finite number (NaN or infinite): `token` is
  // none, and the sequence ends with errc::non_finite_logits.
  bool no_finite_logit = false;
};

struct step_output {
  uint64_t step_id = 0;
  std::vector<sampled_token> sampled; // one per scheduled sequence with sample set
  double forward_seconds = 0;         // the step's time on the device's compute stream
  double sampling_seconds = 0;        // of which sampling the step's rows
};

// Copies the swap actor runs for one sequence: device -> host when swapping
// out, host -> device when swapping in.
enum class swap_direction : uint8_t { out, in };

struct swap_order {
  seq_id id = 0;
  swap_direction direction = swap_direction::out;
  std::vector<block_copy> copies; // out: device -> host; in: host -> device
};

// A sequence's news: a generated token, its end, or both.
struct sequence_update {
  seq_id id = 0;
  token_id token = no_token;
  finish_reason finished = finish_reason::none;
  int32_t num_cached_tokens = 0; // prompt tokens served by the prefix cache
  int32_t num_preemptions = 0;
  model::token_logprobs logprobs{}; // the token's, when the request asked
  errc error_code = errc::none;      // finished error: its code and what failed
  std::string error{};
};

} // namespace kvactor
