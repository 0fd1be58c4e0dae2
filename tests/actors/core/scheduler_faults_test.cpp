// The scheduler under random faults, against the driver's stand-in
// executor (scheduler_driver.hpp).

#include "actors/core/scheduler.hpp"

#include "scheduler_driver.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

namespace kvactor {
namespace {

using namespace kvactor::testing;

// Random arrivals, aborts, forced preemptions of both kinds and swaps that
// complete late, over a host pool small enough that some swap-outs are
// denied: every sequence ends exactly once, the ones not aborted produce
// exactly their undisturbed outputs, and nothing leaks. Returns the driver's
// swap refusals {out, in}.
std::pair<int32_t, int32_t> run_with_faults(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  driver d(24, 6, config(24));
  std::map<seq_id, std::pair<std::vector<token_id>, int32_t>> requests;
  std::set<seq_id> aborted;
  seq_id next = 1;
  for (int round = 0; round < 3000 && (next <= 120 || d.sched().has_work()); ++round) {
    if (next <= 120 && pick(3) == 0) {
      auto prompt = concat(token_run(4 * pick(3), 0), token_run(1 + pick(12), 1000 * next));
      const int32_t max_tokens = 1 + pick(12);
      requests[next] = {prompt, max_tokens};
      EXPECT_FALSE(d.add(next, prompt, max_tokens, pick(3)));
      ++next;
    }
    if (pick(12) == 0) {
      std::vector<seq_id> live;
      for (const auto& [id, req] : requests)
        if (!d.finished().contains(id) && !aborted.contains(id))
          live.push_back(id);
      if (!live.empty()) {
        const seq_id victim = live[pick(int(live.size()))];
        aborted.insert(victim);
        d.abort(victim);
      }
    }
    if (pick(8) == 0)
      d.sched().force_preemption(std::nullopt, pick(2) ? preemption_mode::swap
                                                       : preemption_mode::recompute);
    d.hold_swaps = pick(3) == 0;
    d.step();
  }
  d.complete_swaps();
  d.run_until_idle();
  EXPECT_EQ(d.finished().size(), requests.size());
  EXPECT_GT(d.sched().num_preemptions(), 20);
  EXPECT_GT(aborted.size(), 10u);
  for (const auto& [id, req] : requests) {
    const auto& u = d.finished().at(id);
    if (u.finished == finish_reason::aborted) {
      EXPECT_TRUE(aborted.contains(id));
      continue;
    }
    EXPECT_EQ(d.output(id, req.first.size()), reference(req.first, req.second))
      << "sequence " << id;
  }
  d.expect_idle_and_sound();
  return {d.num_swap_outs_denied, d.num_swap_ins_denied};
}

TEST(scheduler, stays_exact_under_random_faults) {
  int32_t outs_denied = 0, ins_denied = 0;
  for (uint32_t seed : {4u, 5u, 7u, 8u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto [outs, ins] = run_with_faults(seed);
    outs_denied += outs;
    ins_denied += ins;
  }
  // Both refusals happened, so their paths were part of the runs.
  EXPECT_GT(outs_denied, 0);
  EXPECT_GT(ins_denied, 0);
}

} // namespace
} // namespace kvactor
