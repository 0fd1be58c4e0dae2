#include "actors/scheduler.hpp"

#include "kernels/assert.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace kvactor {

scheduler::scheduler(scheduler_config config, int32_t num_device_blocks, int32_t num_host_blocks,
                     int32_t block_size)
  : config_(std::move(config)),
    num_device_blocks_(num_device_blocks),
    num_host_blocks_(num_host_blocks),
    policy_(config_, num_device_blocks) {
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
  const int32_t need = policy_.blocks_needed(seq, params);
  if (need > num_device_blocks_) {
    return "the request needs " + std::to_string(need) + " KV blocks (" +
           policy_.what_is_needed(seq, params) + " at " +
           std::to_string(seq.table().block_size()) + " per block) but the device pool has " +
           std::to_string(num_device_blocks_);
  }
  const seq_id id = seq.id();
  entry& e = entries_.emplace(id, entry{std::move(seq), params}).first->second;
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
    e.seq.table().apply(g.blocks);
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
    st.plan.seqs.emplace_back(e.seq.id(), g.start, token_list(tokens), g.blocks, sample,
                              e.params.sampling, e.seq.num_output_tokens(), e.params.num_logprobs);
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

sequence_update scheduler::end_in_batch(entry& e, finish_reason why) {
  // NOTE: a padding row goes at a later step's start (end_padding_rows),
  // outside this step's bookkeeping.
  return policy_.pads(e.row, why) ? end_update(e, why) : finish(e, why);
}

void scheduler::drop_padding(entry& e) {
  release_to_waiting(e); // as for a recompute; it ends at the next step
  e.preempted_this_step = true;
}

void scheduler::release_to_waiting(entry& e) {
  commands_.blocks.push_back({block_command::release, e.seq.id(), e.seq.num_computed_tokens()});
  e.seq.table().clear();
  e.seq.reset_computed();
  e.seq.set_status(sequence_status::waiting);
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
  const int32_t n = e.seq.table().num_blocks();
  if (mode == preemption_mode::swap && host_used_ + n <= num_host_blocks_) {
    commands_.swaps.push_back({swap_command::swap_out, e.seq.id()});
    host_used_ += n;
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
    e.seq.append_token(sampled->token);
    if (e.padding()) { // its token goes nowhere
      if (e.seq.num_tokens() >= config_.max_model_len && config_.max_model_len > 0)
        drop_padding(e);
      continue;
    }
    sequence_update u{s.id, sampled->token};
    if (is_eos(e, sampled->token))
      u = end_in_batch(e, finish_reason::eos);
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
  e.seq.table().clear(); // the device blocks are free now
  return settle(e);
}

std::vector<sequence_update> scheduler::complete_swap_in(seq_id id, std::vector<block_id> table) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::in, "swap-in completion for a sequence not swapping in");
  host_used_ -= std::exchange(e.num_host_blocks, 0);
  e.swap = swap_state::none;
  e.seq.table().assign(table);
  e.seq.set_status(sequence_status::running);
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
  if (e.swap == swap_state::resting) {
    commands_.swaps.push_back({swap_command::drop_host, e.seq.id()});
    host_used_ -= e.num_host_blocks;
  }
  commands_.blocks.push_back({block_command::forget, e.seq.id(), e.seq.num_computed_tokens()});
  policy_.left(e.row);
  e.seq.table().clear();
  e.seq.finish(why);
  sequence_update u = end_update(e, why);
  released_.push_back(e.seq.id());
  auto at = std::ranges::lower_bound(by_arrival_, arrival_key(&e), {}, arrival_key);
  KVACTOR_ASSERT(at != by_arrival_.end() && *at == &e, "an entry missing from the arrival order");
  by_arrival_.erase(at);
  entries_.erase(e.seq.id());
  return u;
}

sequence_update scheduler::end_update(const entry& e, finish_reason why) {
  return {e.seq.id(), no_token, why, e.num_cached_tokens, e.seq.num_preemptions()};
}

bool scheduler::is_eos(const entry& e, token_id t) const {
  return !e.params.ignore_eos && std::ranges::find(config_.eos_tokens, t) != config_.eos_tokens.end();
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
