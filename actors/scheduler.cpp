#include "actors/scheduler.hpp"

#include "kernels/assert.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace kvactor {

scheduler::scheduler(scheduler_config config, block_manager& blocks, swap_space& host)
  : config_(std::move(config)), blocks_(blocks), host_(host) {
  KVACTOR_ASSERT(config_.max_num_batched_tokens > 0 && config_.max_num_seqs > 0,
                 "a step needs room for at least one token and one sequence");
}

std::optional<std::string> scheduler::add(sequence seq, generation_limits limits) {
  KVACTOR_ASSERT(!entries_.contains(seq.id()), "sequence id already scheduled");
  KVACTOR_ASSERT(limits.max_tokens > 0, "max_tokens must be positive");
  const int32_t need = seq.table().num_blocks_for(seq.num_tokens() + limits.max_tokens);
  if (need > blocks_.pool().num_blocks())
    return "the request needs " + std::to_string(need) + " KV blocks (" +
           std::to_string(seq.num_tokens()) + " prompt tokens + " +
           std::to_string(limits.max_tokens) + " max tokens at " +
           std::to_string(blocks_.block_size()) + " per block) but the device pool has " +
           std::to_string(blocks_.pool().num_blocks());
  const seq_id id = seq.id();
  entries_.emplace(id, entry{std::move(seq), limits});
  return std::nullopt;
}

std::vector<sequence_update> scheduler::abort(seq_id id) {
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  entry& e = i->second;
  if (e.in_step || e.swap == swap_state::out || e.swap == swap_state::in) {
    e.abort_pending = true;
    return {};
  }
  return {*finish(e, finish_reason::aborted)};
}

void scheduler::force_preemption(std::optional<seq_id> id, preemption_mode mode) {
  forced_.emplace(id, mode);
}

std::vector<scheduler::entry*> scheduler::scheduling_order() {
  std::vector<entry*> order;
  order.reserve(entries_.size());
  for (auto& [id, e] : entries_)
    if (!e.abort_pending && (e.swap == swap_state::none || e.swap == swap_state::resting))
      order.push_back(&e);
  // Priority first; within it running sequences, then preempted ones, then
  // new arrivals; FIFO within each.
  auto key = [](const entry* e) {
    const int rank = e->seq.status() == sequence_status::running ? 0
                     : e->seq.num_preemptions() > 0              ? 1
                                                                 : 2;
    return std::tuple(-e->seq.priority(), rank, e->seq.arrival(), e->seq.id());
  };
  std::ranges::sort(order, [&](const entry* a, const entry* b) { return key(a) < key(b); });
  return order;
}

step_plan scheduler::schedule() {
  KVACTOR_ASSERT(!in_flight_, "schedule() while a step is in flight");
  step_plan plan;
  plan.step_id = next_step_id_++;
  plan.released = std::exchange(released_, {});
  for (auto& [id, e] : entries_)
    e.preempted_this_step = false;

  auto order = scheduling_order();
  int32_t pending_free = 0; // device blocks that swap-outs ordered now will free
  if (forced_) {
    auto [id, mode] = *std::exchange(forced_, std::nullopt);
    entry* victim = nullptr;
    if (id) {
      auto i = entries_.find(*id);
      if (i != entries_.end() && i->second.seq.status() == sequence_status::running &&
          i->second.swap == swap_state::none && !i->second.abort_pending)
        victim = &i->second;
    } else {
      auto last = std::ranges::find_if(order.rbegin(), order.rend(), [](const entry* e) {
        return e->seq.status() == sequence_status::running;
      });
      victim = last == order.rend() ? nullptr : *last;
    }
    if (victim)
      preempt(*victim, mode, pending_free);
  }

  int64_t preemptions_before = num_preemptions_;
  int32_t budget = config_.max_num_batched_tokens;
  for (size_t i = 0; i < order.size() && budget > 0; ++i) {
    entry& e = *order[i];
    if (e.preempted_this_step)
      continue;
    if (static_cast<int32_t>(plan.seqs.size()) >= config_.max_num_seqs)
      break;
    const bool under_pressure = num_preemptions_ > preemptions_before;
    if (e.swap == swap_state::resting) {
      if (!under_pressure)
        try_swap_in(e);
      continue;
    }
    if (e.seq.status() == sequence_status::waiting && under_pressure)
      continue; // no admissions while the step had to preempt
    while (!try_schedule(e, budget, plan)) {
      const int32_t need = blocks_.num_blocks_needed(e.seq, 1);
      if (blocks_.pool().num_available_blocks() + pending_free >= need)
        break; // blocks being swapped out will serve it next step
      entry* victim = pick_victim(order, i);
      if (!victim) {
        if (e.seq.status() == sequence_status::running)
          preempt(e, config_.preemption, pending_free); // it yields its own place
        break;
      }
      preempt(*victim, config_.preemption, pending_free);
    }
  }
  if (!plan.seqs.empty()) {
    in_flight_ = plan.step_id;
    in_flight_seqs_.clear();
    for (const auto& s : plan.seqs)
      in_flight_seqs_.push_back(s.id);
  }
  return plan;
}

bool scheduler::try_schedule(entry& e, int32_t& budget, step_plan& plan) {
  sequence& seq = e.seq;
  std::optional<prefix_hit> hit;
  if (seq.table().empty() && seq.num_computed_tokens() == 0)
    hit = blocks_.find_cached_prefix(seq);
  const int32_t hit_tokens = hit ? int32_t(hit->blocks.size()) * blocks_.block_size() : 0;
  const int32_t n = std::min(seq.num_uncomputed_tokens() - hit_tokens, budget);
  auto copies = blocks_.allocate_slots(seq, n, hit ? &*hit : nullptr);
  if (!copies)
    return false;
  if (hit && seq.num_output_tokens() == 0)
    e.num_cached_tokens = hit_tokens;
  if (seq.status() == sequence_status::waiting)
    seq.set_status(sequence_status::running);
  plan.copies.insert(plan.copies.end(), copies->begin(), copies->end());
  const int32_t start = seq.num_computed_tokens();
  auto tokens = seq.tokens().subspan(size_t(start), size_t(n));
  auto table = seq.table().blocks();
  plan.seqs.push_back({seq.id(), start, {tokens.begin(), tokens.end()}, {table.begin(), table.end()},
                       start + n == seq.num_tokens()});
  budget -= n;
  e.in_step = true;
  e.num_scheduled = n;
  return true;
}

void scheduler::try_swap_in(entry& e) {
  const auto num_blocks = static_cast<int32_t>(host_.host_blocks(e.seq.id()).size());
  if (!blocks_.allocate_for_swap_in(e.seq, num_blocks))
    return;
  swap_orders_.push_back(
    {e.seq.id(), swap_direction::in, host_.swap_in(e.seq.id(), e.seq.table().blocks())});
  e.swap = swap_state::in;
}

scheduler::entry* scheduler::pick_victim(const std::vector<entry*>& order, size_t current) const {
  // Only sequences after the current one in scheduling order, not in the plan.
  for (size_t j = order.size(); j-- > current + 1;) {
    entry* v = order[j];
    if (v->seq.status() == sequence_status::running && !v->in_step &&
        v->swap == swap_state::none && !v->preempted_this_step)
      return v;
  }
  return nullptr;
}

void scheduler::preempt(entry& e, preemption_mode mode, int32_t& pending_free) {
  KVACTOR_ASSERT(e.seq.status() == sequence_status::running && !e.in_step &&
                   e.swap == swap_state::none,
                 "preempting a sequence that is not resting in the running set");
  e.seq.count_preemption();
  ++num_preemptions_;
  e.preempted_this_step = true;
  if (mode == preemption_mode::swap) {
    if (auto copies = host_.swap_out(e.seq.id(), e.seq.table().blocks())) {
      for (block_id b : e.seq.table().blocks())
        pending_free += blocks_.pool().ref_count(b) == 1;
      swap_orders_.push_back({e.seq.id(), swap_direction::out, std::move(*copies)});
      e.swap = swap_state::out;
      e.seq.set_status(sequence_status::swapped);
      return;
    }
  }
  blocks_.free(e.seq); // recompute, or the host pool is full
  e.seq.reset_computed();
  e.seq.set_status(sequence_status::waiting);
}

std::vector<sequence_update> scheduler::update_from_output(const step_output& out) {
  KVACTOR_ASSERT(in_flight_ && *in_flight_ == out.step_id, "output of a step not in flight");
  in_flight_.reset();
  std::vector<sequence_update> updates;
  for (seq_id id : std::exchange(in_flight_seqs_, {})) {
    entry& e = entries_.at(id);
    e.in_step = false;
    if (e.abort_pending) { // its late token is dropped
      updates.push_back(*finish(e, finish_reason::aborted));
      continue;
    }
    e.seq.add_computed_tokens(std::exchange(e.num_scheduled, 0));
    blocks_.cache_computed_blocks(e.seq);
    if (e.seq.num_uncomputed_tokens() > 0)
      continue; // a prefill chunk short of the last token samples nothing
    auto s = std::ranges::find(out.sampled, id, &sampled_token::id);
    KVACTOR_ASSERT(s != out.sampled.end(), "no token sampled for a sequence that samples");
    e.seq.append_token(s->token);
    sequence_update u{id, s->token};
    if (is_eos(e, s->token))
      u = *finish(e, finish_reason::eos);
    else if (e.seq.num_output_tokens() >= e.limits.max_tokens)
      u = *finish(e, finish_reason::max_tokens);
    u.token = s->token;
    updates.push_back(u);
  }
  return updates;
}

std::vector<swap_order> scheduler::take_swap_orders() {
  return std::exchange(swap_orders_, {});
}

std::vector<sequence_update> scheduler::complete_swap_out(seq_id id) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::out, "swap-out completion for a sequence not swapping out");
  blocks_.free(e.seq); // the copy is done: the device blocks may be reused
  e.swap = swap_state::resting;
  if (e.abort_pending)
    return {*finish(e, finish_reason::aborted)};
  return {};
}

std::vector<sequence_update> scheduler::complete_swap_in(seq_id id) {
  entry& e = entries_.at(id);
  KVACTOR_ASSERT(e.swap == swap_state::in, "swap-in completion for a sequence not swapping in");
  host_.release(id);
  e.swap = swap_state::none;
  e.seq.set_status(sequence_status::running);
  if (e.abort_pending)
    return {*finish(e, finish_reason::aborted)};
  return {};
}

std::optional<sequence_update> scheduler::finish(entry& e, finish_reason why) {
  KVACTOR_ASSERT(!e.in_step && (e.swap == swap_state::none || e.swap == swap_state::resting),
                 "finishing a sequence that in-flight work still holds");
  if (e.swap == swap_state::resting)
    host_.release(e.seq.id());
  blocks_.free(e.seq);
  e.seq.finish(why);
  sequence_update u{e.seq.id(), std::nullopt, why, e.num_cached_tokens, e.seq.num_preemptions()};
  released_.push_back(e.seq.id());
  entries_.erase(e.seq.id());
  return u;
}

bool scheduler::is_eos(const entry& e, token_id t) const {
  return !e.limits.ignore_eos && std::ranges::find(config_.eos_tokens, t) != config_.eos_tokens.end();
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
