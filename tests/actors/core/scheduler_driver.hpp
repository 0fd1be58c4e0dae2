#pragma once
// scheduler_driver: plays the block manager, swap and executor actors around
// a scheduler, synchronously, for the scheduler tests.

#include "actors/core/kv_ledger.hpp"
#include "actors/core/pool_invariants.hpp"
#include "actors/core/scheduler.hpp"
#include "actors/core/swap_protocol.hpp"
#include "sequence_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvactor::testing {

inline constexpr int32_t bs = 4;

// Plays the block manager, swap and executor actors, synchronously and in
// the order their messages would arrive; the swap actor's part is its own
// protocol (swap_protocol.hpp). The "model" samples a token that
// depends only on the tokens so far and the seed, so any schedule must yield
// the same outputs; swaps complete when the test says so (or at once). Like an
// executor it keeps each sequence's block table from the plans' changes, and
// checks at each step that it equals the ledger's.
class driver {
public:
  driver(int32_t num_blocks, int32_t num_host_blocks, scheduler_config config)
    : ledger_(num_blocks, bs, config.prefix_caching), swaps_(num_host_blocks),
      sched_(std::move(config), num_blocks, num_host_blocks, bs) {}

  std::optional<std::string> add(seq_id id, std::vector<token_id> prompt, int32_t max_tokens,
                                 int32_t priority = 0, int32_t num_choices = 1,
                                 uint64_t seed = 0) {
    for (int32_t c = 0; c < num_choices; ++c)
      tokens_[id + seq_id(c)] = prompt;
    generation_params params{max_tokens, false, {}};
    params.sampling.seed = seed;
    return sched_.add(sequence(id, std::move(prompt), priority, next_arrival_++), params,
                      num_choices);
  }

  static token_id next_token(const std::vector<token_id>& tokens, uint64_t seed = 0) {
    uint64_t h = 17 + seed * 7919;
    for (size_t i = 0; i < tokens.size(); ++i)
      h = h * 31 + uint64_t(tokens[i]) * (i + 1);
    return token_id(h % 997) + 3;
  }

  step_plan plan() {
    auto p = sched_.begin_step();
    run_commands();
    while (!p.plan) {
      auto r = ledger_.reserve(p.reserve);
      p = sched_.on_reservation(r);
      run_commands();
    }
    return *p.plan;
  }

  // One plan/execute/update round; swaps complete right after the plan
  // unless hold_swaps is set.
  step_plan step() {
    step_plan p = plan();
    // Liveness: with nothing to wait for, a step must make progress (an
    // actor would otherwise wait forever for an event).
    if (p.seqs.empty() && pending_swaps_.empty() && sched_.has_work())
      ADD_FAILURE() << "the scheduler stalled with " << sched_.num_sequences() << " sequences";
    if (!hold_swaps)
      complete_swaps();
    if (!p.seqs.empty())
      apply(sched_.update_from_output(execute(p)));
    run_commands();
    return p;
  }

  step_output execute(const step_plan& plan) {
    for (seq_id id : plan.released)
      tables_.erase(id);
    step_output out{plan.step_id, {}};
    for (const auto& s : plan.seqs) {
      auto& table = tables_[s.id];
      if (size_t(s.blocks.num_kept) > table.size()) {
        ADD_FAILURE() << "sequence " << s.id << ": a change keeps " << s.blocks.num_kept
                      << " blocks of a table of " << table.size();
        continue;
      }
      s.blocks.apply_to(table);
      EXPECT_EQ(table, ledger_.blocks_of(s.id)) << "sequence " << s.id;
      EXPECT_LE(s.start + int32_t(s.tokens.size()), int32_t(table.size()) * bs);
      if (s.sample)
        out.sampled.push_back({s.id, next_token(tokens_.at(s.id), s.sampling.seed)});
    }
    return out;
  }

  std::vector<sequence_update> abort(seq_id id) {
    auto updates = sched_.abort(id);
    apply(updates);
    run_commands();
    return updates;
  }

  // Completes (or refuses) the swaps ordered so far; returns the updates they
  // caused.
  std::vector<sequence_update> complete_swaps() {
    std::vector<sequence_update> all;
    swap_side side(*this);
    for (const pending_swap& p : std::exchange(pending_swaps_, {})) {
      if (p.denied && p.direction == swap_direction::out)
        reported_ = sched_.swap_out_denied(p.id);
      else if (p.denied)
        reported_ = sched_.swap_in_denied(p.id);
      else if (p.direction == swap_direction::out)
        swaps_.copied_out(p.id, side);
      else
        swaps_.copied_in(p.id, side);
      const std::vector<sequence_update> updates = std::exchange(reported_, {});
      run_commands();
      apply(updates);
      all.insert(all.end(), updates.begin(), updates.end());
    }
    return all;
  }

  // The scheduler's commands through the delivery the scheduler actor uses
  // (scheduler_commands.hpp): the block manager's to the ledger directly,
  // the swap actor's to its protocol.
  void run_commands() {
    struct direct final : command_receivers {
      driver& d;
      swap_side side;
      explicit direct(driver& to) : d(to), side(to) {}
      void release(seq_id id, int32_t n) override { d.ledger_.release(id, n); }
      void forget(seq_id id, int32_t n) override { d.ledger_.forget(id, n); }
      void fork(seq_id first, seq_id child) override { d.ledger_.fork(first, child); }
      void drop_host(seq_id id) override { d.swaps_.drop_host(id); }
      // The block manager's part: the blocks, or a refusal.
      void swap_out(seq_id id) override { d.swaps_.swap_out(id, d.ledger_.blocks_of(id), side); }
      void swap_in(seq_id id, int32_t n) override {
        if (auto table = d.ledger_.allocate_for_swap_in(id, n)) {
          d.swaps_.swap_in(id, *table, side);
        } else {
          ++d.num_swap_ins_denied;
          d.pending_swaps_.push_back({id, swap_direction::in, true});
        }
      }
    } receivers(*this);
    deliver(sched_.take_commands(), receivers);
  }

  void apply(const std::vector<sequence_update>& updates) {
    for (const auto& u : updates) {
      if (u.token != no_token)
        tokens_[u.id].push_back(u.token);
      if (u.finished != finish_reason::none) {
        EXPECT_FALSE(finished_.contains(u.id)) << "sequence " << u.id << " ended twice";
        finished_[u.id] = u;
      }
    }
  }

  void run_until_idle(int max_steps = 10000) {
    for (int i = 0; i < max_steps && sched_.has_work(); ++i)
      step();
    ASSERT_FALSE(sched_.has_work()) << "not idle after " << max_steps << " steps";
  }

  void expect_idle_and_sound() {
    EXPECT_EQ(ledger_.num_sequences(), 0);
    EXPECT_EQ(blocks().pool().num_used_blocks(), 0);
    EXPECT_EQ(host().num_free_blocks(), host().num_blocks());
    EXPECT_EQ(sched_.num_sequences(), 0);
    EXPECT_THAT(ledger_.check_invariants(), ::testing::IsEmpty());
    EXPECT_THAT(check_invariants(host()), ::testing::IsEmpty());
  }

  std::vector<token_id> output(seq_id id, size_t prompt_len) const {
    const auto& t = tokens_.at(id);
    return {t.begin() + ptrdiff_t(prompt_len), t.end()};
  }

  // The block table the executor holds for a sequence.
  const std::vector<block_id>& executor_table(seq_id id) { return tables_[id]; }
  scheduler& sched() { return sched_; }
  kv_ledger& ledger() { return ledger_; }
  const block_allocator& blocks() const { return ledger_.blocks(); }
  const swap_space& host() const { return swaps_.space(); }
  std::map<seq_id, sequence_update>& finished() { return finished_; }
  bool hold_swaps = false;
  int32_t num_swap_outs_denied = 0;
  int32_t num_swap_ins_denied = 0;

private:
  // The swap protocol's messages: copies end when complete_swaps() says, and
  // so do the swap actor's and the block manager's refusals (in the runtime
  // they travel back as a message, and aborts can come first).
  struct pending_swap {
    seq_id id = 0;
    swap_direction direction = swap_direction::out;
    bool denied = false;
  };
  class swap_side final : public swap_outbox {
  public:
    explicit swap_side(driver& to) : d(to) {}
    void free_swapped(seq_id id) override { d.ledger_.release_swapped(id); }
    void copy(swap_order order) override {
      d.pending_swaps_.push_back({order.id, order.direction, false});
    }
    void swap_out_denied(seq_id id) override {
      ++d.num_swap_outs_denied;
      d.pending_swaps_.push_back({id, swap_direction::out, true});
    }
    void swapped_out(seq_id id) override { d.reported_ = d.sched_.complete_swap_out(id); }
    void swapped_in(seq_id id) override { d.reported_ = d.sched_.complete_swap_in(id); }

  private:
    driver& d;
  };

  kv_ledger ledger_;
  swap_protocol swaps_;
  scheduler sched_;
  std::map<seq_id, std::vector<token_id>> tokens_;
  std::map<seq_id, sequence_update> finished_;
  std::vector<pending_swap> pending_swaps_; // swaps ordered and not yet reported
  std::vector<sequence_update> reported_;   // what the scheduler made of the last report
  std::map<seq_id, std::vector<block_id>> tables_; // the executor's
  uint64_t next_arrival_ = 0;
};

inline scheduler_config config(int32_t budget, preemption_mode mode = preemption_mode::swap) {
  scheduler_config c;
  c.max_num_batched_tokens = budget;
  c.preemption = mode;
  return c;
}

// The outputs of each request run alone, with plenty of memory.
inline std::vector<token_id> reference(std::vector<token_id> prompt, int32_t max_tokens,
                                       uint64_t seed = 0) {
  driver d(64, 0, config(64));
  d.add(1, prompt, max_tokens, 0, 1, seed);
  d.run_until_idle();
  return d.output(1, prompt.size());
}

} // namespace kvactor::testing
