// The scheduler's planning side: admission, the scheduling order, each
// step's plan and preemption (scheduler.hpp). What comes back, and how
// sequences end, is in scheduler_reports.cpp.

#include "actors/core/scheduler.hpp"

#include "base/assert.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace kvactor {

scheduler::scheduler(scheduler_config config, int32_t num_device_blocks, int32_t num_host_blocks,
                     int32_t block_size)
  : config_(std::move(config)),
    num_device_blocks_(num_device_blocks),
    num_host_blocks_(num_host_blocks),
    block_size_(block_size),
    policy_(config_, num_device_blocks, block_size) {
  KVACTOR_ASSERT(config_.max_num_batched_tokens > 0 && config_.max_num_seqs > 0,
                 "a step needs room for at least one token and one sequence");
  KVACTOR_ASSERT(block_size > 0, "block size must be positive");
}

std::optional<std::string> scheduler::add(sequence seq, generation_params params,
                                          int32_t num_choices) {
  KVACTOR_ASSERT(!entries_.contains(seq.id()), "sequence id already scheduled");
  KVACTOR_ASSERT(params.max_tokens > 0, "max_tokens must be positive");
  KVACTOR_ASSERT(num_choices == 1 || (num_choices > 1 && forks()),
                 "several choices where the scheduler does not fork");
  // NOTE: all choices together: choices that fit only one after another
  // would preempt every other request, and each other, for as long as they run.
  const int64_t need = policy_.request_blocks_needed(seq, params, num_choices);
  if (need > num_device_blocks_) {
    return "the request needs " + std::to_string(need) + " KV blocks of " +
           std::to_string(block_size_) + " tokens (" + std::to_string(need * block_size_) +
           " tokens) for " + policy_.what_is_needed(seq, params, num_choices) +
           ", but the device pool has " + std::to_string(num_device_blocks_) + " (" +
           std::to_string(int64_t{num_device_blocks_} * block_size_) + " tokens)";
  }
  if (params.sampling.min_tokens > 0) { // what may not end it before then
    std::vector<token_id>& banned = params.sampling.min_tokens_banned;
    banned = params.stop_token_ids;
    if (!params.ignore_eos)
      banned.insert(banned.end(), config_.eos_tokens.begin(), config_.eos_tokens.end());
  }
  const seq_id id = seq.id();
  entry& e = entries_.emplace(id, entry{std::move(seq), std::move(params)}).first->second;
  e.num_unforked = num_choices - 1;
  insert(e);
  maybe_fork(e); // a one-token prompt has nothing to share
  return std::nullopt;
}

void scheduler::insert(entry& e) {
  by_arrival_.insert(std::ranges::upper_bound(by_arrival_, arrival_key(&e), {}, arrival_key), &e);
}

std::vector<sequence_update> scheduler::abort(seq_id id, finish_reason why) {
  KVACTOR_ASSERT(why == finish_reason::aborted || why == finish_reason::stop,
                 "a sequence is ended from outside as aborted or stopped");
  KVACTOR_ASSERT(!step_ || step_->planned, "abort during planning");
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  entry& e = i->second;
  if (e.padding())
    return {}; // its request has ended already
  if (held(e)) {
    if (e.abort_pending == finish_reason::none)
      e.abort_pending = why;
    return {};
  }
  return end(e, why);
}

void scheduler::force_preemption(std::optional<seq_id> id, preemption_mode mode) {
  forced_.emplace(id, mode);
}

std::tuple<int32_t, uint64_t, seq_id> scheduler::arrival_key(const entry* e) {
  return {-e->seq.priority(), e->seq.arrival(), e->seq.id()};
}

std::vector<scheduler::entry*> scheduler::scheduling_order() {
  // Priority first; within it running sequences, then preempted ones, then
  // new arrivals; FIFO within each. Padding rows (padded batching) last of
  // all, so that they are the first to go when memory runs short.
  // NOTE: by_arrival_ holds the part of that order that never changes; one
  // pass over each priority's entries splits them by rank, no sort.
  std::vector<entry*> order;
  order.reserve(by_arrival_.size());
  std::vector<entry*> preempted, arrived, padding;
  for (auto e = by_arrival_.begin(); e != by_arrival_.end(); ++e) {
    if ((*e)->abort_pending == finish_reason::none &&
        ((*e)->swap == swap_state::none || (*e)->swap == swap_state::resting)) {
      const sequence& seq = (*e)->seq;
      ((*e)->padding()                          ? padding
       : seq.status() == sequence_status::running ? order
       : seq.num_preemptions() > 0              ? preempted
                                                : arrived)
        .push_back(*e);
    }
    if (e + 1 == by_arrival_.end() || (*(e + 1))->seq.priority() != (*e)->seq.priority()) {
      order.insert(order.end(), preempted.begin(), preempted.end());
      order.insert(order.end(), arrived.begin(), arrived.end());
      preempted.clear();
      arrived.clear();
    }
  }
  order.insert(order.end(), padding.begin(), padding.end());
  return order;
}

scheduler::planning scheduler::begin_step() {
  KVACTOR_ASSERT(!step_, "a step is already planned or in flight");
  step_state& st = step_.emplace();
  st.plan.step_id = next_step_id_++;

  if (forced_) {
    auto [id, mode] = *std::exchange(forced_, std::nullopt);
    auto order = scheduling_order();
    entry* victim = nullptr;
    for (auto it = order.rbegin(); it != order.rend() && !victim; ++it)
      if ((*it)->seq.status() == sequence_status::running && (*it)->swap == swap_state::none &&
          (!id || (*it)->seq.id() == *id))
        victim = *it;
    if (victim)
      preempt(*victim, mode);
  }
  // A forced preemption is no sign of memory pressure: admissions go on, its
  // victim's included.
  st.preemptions_at_start = num_preemptions_;
  for (auto& [id, e] : entries_)
    e.preempted_this_step = false;

  end_padding_rows();
  st.order = scheduling_order();
  if (policy_.opens_batch()) {
    std::vector<batching_policy::row*> rows;
    for (entry* e : st.order)
      rows.push_back(&e->row);
    policy_.open_batch(rows);
  }
  std::vector<entry*> candidates;
  candidates.reserve(st.order.size());
  int32_t budget = config_.max_num_batched_tokens;
  int32_t num_reserving = policy_.num_reserved_blocks();
  for (entry* e : st.order) {
    if (budget == 0 || static_cast<int32_t>(candidates.size()) == config_.max_num_seqs)
      break;
    if (e->swap != swap_state::none || e->preempted_this_step ||
        (e->seq.status() == sequence_status::waiting && st.under_pressure(num_preemptions_)) ||
        !policy_.admissible(e->row, e->seq, e->params, num_reserving))
      continue;
    e->num_scheduled = std::min(e->num_sendable() - e->seq.num_computed_tokens(), budget);
    budget -= e->num_scheduled;
    candidates.push_back(e);
  }
  return ask(std::move(candidates));
}

scheduler::planning scheduler::ask(std::vector<entry*> candidates) {
  step_state& st = *step_;
  if (candidates.empty())
    return finish_planning();
  planning p;
  p.reserve.reserve(candidates.size());
  for (entry* e : candidates) {
    auto tokens = e->seq.tokens().subspan(size_t(e->num_tokens_sent),
                                          size_t(e->num_sendable() - e->num_tokens_sent));
    p.reserve.emplace_back(e->seq.id(), token_list(tokens), e->seq.num_computed_tokens(),
                           e->num_scheduled);
  }
  st.asked = std::move(candidates);
  return p;
}

scheduler::planning scheduler::on_reservation(const reservation_result& r) {
  KVACTOR_ASSERT(step_ && !step_->planned, "reservation result outside planning");
  step_state& st = *step_;
  KVACTOR_ASSERT(r.granted.size() <= st.asked.size(), "more grants than entries asked");
  if (st.plan.seqs.empty()) {
    st.plan.seqs.reserve(st.asked.size());
    st.in_flight.reserve(st.asked.size());
  }
  for (size_t k = 0; k < r.granted.size(); ++k) {
    entry& e = *st.asked[k];
    const granted_entry& g = r.granted[k];
    KVACTOR_ASSERT(g.id == e.seq.id(), "grants out of order");
    e.num_tokens_sent = e.num_sendable();
    e.num_blocks = g.blocks.num_kept + static_cast<int32_t>(g.blocks.added.size());
    if (g.start != e.seq.num_computed_tokens())
      e.seq.add_computed_tokens(g.start - e.seq.num_computed_tokens()); // a prefix hit
    if (g.num_cached_tokens > 0 && e.seq.num_output_tokens() == 0)
      e.num_cached_tokens = g.num_cached_tokens;
    if (e.seq.status() == sequence_status::waiting)
      e.seq.set_status(sequence_status::running);
    policy_.granted(e.row, e.seq, e.params);
    e.in_step = true;
    e.num_scheduled = g.num_new_tokens;
    auto tokens = e.seq.tokens().subspan(size_t(g.start), size_t(g.num_new_tokens));
    const bool sample = g.start + g.num_new_tokens == e.seq.num_tokens();
    scheduled_sequence& s = st.plan.seqs.emplace_back(
      e.seq.id(), g.start, token_list(tokens), g.blocks, sample, e.params.sampling,
      e.seq.num_output_tokens(), e.params.num_logprobs);
    if (e.params.sampling.penalises() && !std::exchange(e.history_sent, true))
      s.history_prompt = token_list(e.seq.prompt());
    if (!e.params.constraint.empty() && !std::exchange(e.constraint_sent, true))
      s.constraint = e.params.constraint;
    st.in_flight.emplace_back(&e, e.seq.id(), sample);
  }
  st.plan.copies.insert(st.plan.copies.end(), r.copies.begin(), r.copies.end());
  if (r.denied < 0)
    return finish_planning();

  const auto k = static_cast<size_t>(r.denied);
  entry& e = *st.asked[k];
  e.num_tokens_sent = e.num_sendable(); // the ledger saw its tokens
  std::vector<entry*> rest(st.asked.begin() + ptrdiff_t(k) + 1, st.asked.end());
  std::vector<entry*> retry;
  if (r.num_blocks_short <= st.pending_free) {
    // The blocks of sequences being swapped out will serve it next step.
  } else if (entry* victim = pick_victim(e)) {
    preempt(*victim, config_.preemption);
    retry.push_back(&e);
  } else if (e.seq.status() == sequence_status::running) {
    preempt(e, config_.preemption); // nothing below it: it yields its own place
  } else {
    rest.clear(); // a new arrival waits for blocks; so do the ones after it
  }
  for (entry* c : rest)
    if (!c->preempted_this_step &&
        !(c->seq.status() == sequence_status::waiting && st.under_pressure(num_preemptions_)))
      retry.push_back(c);
  return ask(std::move(retry));
}

void scheduler::drop_padding(entry& e) {
  release_to_waiting(e); // as for a recompute; it ends at the next step
  e.preempted_this_step = true;
}

void scheduler::release_to_waiting(entry& e) {
  commands_.blocks.push_back({block_command::release, e.seq.id(), e.seq.num_computed_tokens()});
  e.num_blocks = 0;
  e.seq.reset_computed();
  e.seq.set_status(sequence_status::waiting);
}

bool scheduler::would_open_a_partial_batch() const {
  if (!policy_.between_batches())
    return false;
  const int32_t n = num_waiting();
  return n > 0 && n < config_.max_num_seqs;
}

scheduler::entry* scheduler::pick_victim(const entry& current) const {
  // Running sequences after `current` in scheduling order, not in the plan.
  const auto& order = step_->order;
  for (auto it = order.rbegin(); it != order.rend() && *it != &current; ++it) {
    entry* v = *it;
    if (v->seq.status() == sequence_status::running && !v->in_step &&
        v->swap == swap_state::none && !v->preempted_this_step)
      return v;
  }
  return nullptr;
}

void scheduler::preempt(entry& e, preemption_mode mode) {
  KVACTOR_ASSERT(e.seq.status() == sequence_status::running && !e.in_step &&
                   e.swap == swap_state::none,
                 "preempting a sequence that is not resting in the running set");
  if (e.padding()) {
    drop_padding(e);
    return;
  }
  e.seq.count_preemption();
  ++num_preemptions_;
  e.preempted_this_step = true;
  const int32_t n = e.num_blocks;
  // Whether the host pool has room now is the swap actor's to say (a
  // swap-out it has no room for comes back as swap_out_denied, and the
  // sequence is recomputed then); one it could never hold is recomputed now.
  if (mode == preemption_mode::swap && n <= num_host_blocks_) {
    commands_.swaps.push_back({swap_command::swap_out, e.seq.id()});
    ++num_swap_outs_;
    e.num_host_blocks = n;
    e.swap = swap_state::out;
    e.seq.set_status(sequence_status::swapped);
    if (step_)
      step_->pending_free += n;
    return;
  }
  release_to_waiting(e);
}

scheduler::planning scheduler::finish_planning() {
  step_state& st = *step_;
  if (!st.under_pressure(num_preemptions_)) {
    for (entry* e : st.order)
      if (e->swap == swap_state::resting) {
        commands_.swaps.push_back({swap_command::swap_in, e->seq.id(), e->num_host_blocks});
        e->swap = swap_state::in;
      }
  }
  planning p;
  p.plan = std::move(st.plan);
  if (p.plan->seqs.empty()) {
    step_.reset();
    return p;
  }
  p.plan->released = std::exchange(released_, {});
  st.planned = true;
  st.plan.step_id = p.plan->step_id; // kept to check the output's
  return p;
}

int32_t scheduler::num_with_status(sequence_status s) const {
  return static_cast<int32_t>(std::ranges::count_if(
    entries_, [s](const auto& kv) { return kv.second.seq.status() == s; }));
}

int32_t scheduler::num_waiting() const { return num_with_status(sequence_status::waiting); }
int32_t scheduler::num_running() const { return num_with_status(sequence_status::running); }
int32_t scheduler::num_swapped() const { return num_with_status(sequence_status::swapped); }

const sequence* scheduler::find(seq_id id) const {
  auto i = entries_.find(id);
  return i == entries_.end() ? nullptr : &i->second.seq;
}

} // namespace kvactor
