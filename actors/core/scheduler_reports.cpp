// The scheduler's reports side: what comes back from the executor and the
// swap actor, and how sequences end (scheduler.hpp). Planning is in
// scheduler.cpp.

#include "actors/core/scheduler.hpp"

#include "base/assert.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace kvactor {

std::vector<sequence_update> scheduler::update_from_output(const step_output& out) {
  KVACTOR_ASSERT(step_ && step_->planned && step_->plan.step_id == out.step_id,
                 "output of a step not in flight");
  const std::vector<in_flight_sequence> in_flight = std::move(step_->in_flight);
  step_.reset();
  std::vector<sequence_update> updates;
  updates.reserve(in_flight.size());
  size_t next_sampled = 0; // tokens come in plan order; any other order is found too
  for (const auto& s : in_flight) {
    entry& e = *s.e;
    e.in_step = false;
    if (auto ended = settle(e); !ended.empty()) { // its late token is dropped
      updates.insert(updates.end(), ended.begin(), ended.end());
      continue;
    }
    e.seq.add_computed_tokens(std::exchange(e.num_scheduled, 0));
    if (!s.sample) { // a prefill chunk short of the last token samples nothing
      maybe_fork(e);
      continue;
    }
    auto sampled = next_sampled < out.sampled.size() && out.sampled[next_sampled].id == s.id
                     ? out.sampled.begin() + ptrdiff_t(next_sampled)
                     : std::ranges::find(out.sampled, s.id, &sampled_token::id);
    KVACTOR_ASSERT(sampled != out.sampled.end(), "no token sampled for a sequence that samples");
    next_sampled = size_t(sampled - out.sampled.begin()) + 1;
    if (sampled->no_finite_logit && !e.padding()) { // the token is not the model's
      std::string why = "the model's logits for output token " +
                        std::to_string(e.seq.num_output_tokens()) +
                        " held no finite number (NaN or infinite): its weights are corrupt, or "
                        "its arithmetic overflowed";
      sequence_update u = end_in_batch(e, finish_reason::error);
      u.error_code = errc::non_finite_logits;
      u.error = std::move(why);
      updates.push_back(std::move(u));
      continue;
    }
    e.seq.append_token(sampled->token);
    if (e.padding()) { // its token goes nowhere
      if (e.seq.num_tokens() >= config_.max_model_len && config_.max_model_len > 0)
        drop_padding(e);
      continue;
    }
    sequence_update u{s.id, sampled->token};
    if (is_eos(e, sampled->token))
      u = end_in_batch(e, finish_reason::eos);
    else if (is_stop_token(e, sampled->token) || sampled->must_end)
      u = end_in_batch(e, finish_reason::stop);
    else if (e.seq.num_output_tokens() >= e.params.max_tokens)
      u = end_in_batch(e, finish_reason::max_tokens);
    u.token = sampled->token;
    u.logprobs = sampled->logprobs;
    updates.push_back(u);
  }
  return updates;
}

scheduler_commands scheduler::take_commands() {
  return std::exchange(commands_, {});
}

std::vector<sequence_update> scheduler::complete_swap_out(seq_id id) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::out, "swap-out completion for a sequence not swapping out");
  e.swap = swap_state::resting;
  e.num_blocks = 0; // the device blocks are free now
  return settle(e);
}

std::vector<sequence_update> scheduler::complete_swap_in(seq_id id) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::in, "swap-in completion for a sequence not swapping in");
  e.num_blocks = std::exchange(e.num_host_blocks, 0); // as many fresh device blocks
  e.swap = swap_state::none;
  e.seq.set_status(sequence_status::running);
  return settle(e);
}

std::vector<sequence_update> scheduler::swap_out_denied(seq_id id) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::out, "swap-out denial for a sequence not swapping out");
  e.swap = swap_state::none;
  e.num_host_blocks = 0;
  ++num_swap_outs_refused_;
  release_to_waiting(e); // recomputed instead: its device blocks come free now
  return settle(e);
}

std::vector<sequence_update> scheduler::swap_in_denied(seq_id id) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::in, "swap-in denial for a sequence not swapping in");
  e.swap = swap_state::resting; // asked for again at a later step
  return settle(e);
}

void scheduler::maybe_fork(entry& e) {
  if (e.num_unforked == 0 || e.seq.num_computed_tokens() < e.num_sendable())
    return;
  const seq_id id = e.seq.id();
  for (int32_t c = 1; c <= e.num_unforked; ++c) {
    const seq_id child = id + static_cast<seq_id>(c);
    KVACTOR_ASSERT(!entries_.contains(child), "a choice's sequence id already scheduled");
    entry k{e.seq.fork(child, e.seq.arrival()), e.params};
    k.params.sampling.seed += static_cast<uint64_t>(c);
    k.num_tokens_sent = e.num_tokens_sent;
    k.num_blocks = e.num_blocks; // shared
    k.num_cached_tokens = e.num_cached_tokens;
    insert(entries_.emplace(child, std::move(k)).first->second);
    if (e.num_tokens_sent > 0) // else the ledger has no record of it yet
      commands_.blocks.push_back({block_command::fork, id, 0, child});
  }
  e.num_unforked = 0;
}

std::vector<sequence_update> scheduler::settle(entry& e) {
  if (e.abort_pending == finish_reason::none || held(e))
    return {};
  return end(e, e.abort_pending);
}

std::vector<sequence_update> scheduler::end(entry& e, finish_reason why) {
  const seq_id id = e.seq.id();
  const int32_t num_unforked = e.num_unforked;
  std::vector<sequence_update> ends{finish(e, why)};
  for (int32_t c = 1; c <= num_unforked; ++c) {
    ends.push_back(ends.front());
    ends.back().id = id + static_cast<seq_id>(c);
  }
  return ends;
}

sequence_update scheduler::finish(entry& e, finish_reason why) {
  KVACTOR_ASSERT(!held(e), "finishing a sequence that in-flight work still holds");
  if (e.swap == swap_state::resting)
    commands_.swaps.push_back({swap_command::drop_host, e.seq.id()});
  commands_.blocks.push_back({block_command::forget, e.seq.id(), e.seq.num_computed_tokens()});
  policy_.left(e.row);
  e.num_blocks = 0;
  e.seq.finish(why);
  sequence_update u = end_update(e, why);
  released_.push_back(e.seq.id());
  auto at = std::ranges::lower_bound(by_arrival_, arrival_key(&e), {}, arrival_key);
  KVACTOR_ASSERT(at != by_arrival_.end() && *at == &e, "an entry missing from the arrival order");
  by_arrival_.erase(at);
  entries_.erase(e.seq.id());
  return u;
}

std::vector<sequence_update> scheduler::fail_all(const std::string& why) {
  std::vector<sequence_update> ends;
  for (const entry* e : by_arrival_) {
    policy_.left(e->row);
    if (e->padding())
      continue; // its request has ended already
    sequence_update u = end_update(*e, finish_reason::error);
    u.error_code = errc::device_unusable;
    u.error = why;
    for (int32_t c = 0; c <= e->num_unforked; ++c) {
      ends.push_back(u);
      ends.back().id = e->seq.id() + static_cast<seq_id>(c);
    }
  }
  by_arrival_.clear();
  entries_.clear();
  step_.reset();
  released_.clear();
  commands_ = {};
  forced_.reset();
  return ends;
}

sequence_update scheduler::end_update(const entry& e, finish_reason why) {
  return {e.seq.id(), no_token, why, e.num_cached_tokens, e.seq.num_preemptions()};
}

// NOTE: the sampler makes these tokens impossible before min_tokens; the
// count is checked here as well, so that an end never comes early.
bool scheduler::is_eos(const entry& e, token_id t) const {
  return !e.params.ignore_eos && e.seq.num_output_tokens() >= e.params.sampling.min_tokens &&
         std::ranges::find(config_.eos_tokens, t) != config_.eos_tokens.end();
}

bool scheduler::is_stop_token(const entry& e, token_id t) const {
  return e.seq.num_output_tokens() >= e.params.sampling.min_tokens &&
         std::ranges::find(e.params.stop_token_ids, t) != e.params.stop_token_ids.end();
}

sequence_update scheduler::end_in_batch(entry& e, finish_reason why) {
  // NOTE: a padding row goes at a later step's start (end_padding_rows),
  // outside this step's bookkeeping.
  return policy_.pads(e.row, why) ? end_update(e, why) : finish(e, why);
}

void scheduler::end_padding_rows() {
  if (policy_.num_padding_rows() == 0)
    return;
  const bool batch_over = policy_.between_batches();
  std::vector<entry*> ending;
  for (auto& [id, e] : entries_)
    if (e.padding() && (batch_over || e.seq.status() == sequence_status::waiting))
      ending.push_back(&e);
  for (entry* e : ending)
    finish(*e, e->row.padded_end); // nobody receives this update
}

} // namespace kvactor
