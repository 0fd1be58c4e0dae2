#include "actors/core/pool_invariants.hpp"

#include "sequence_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>

namespace kvactor {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace kvactor::testing;

TEST(pool_invariants, detects_a_leaked_reference) {
  block_pool pool(4, 16);
  block_table table(16);
  table.append(pool.allocate(1)->front());
  pool.allocate(1); // held by no table: a leak
  auto broken = check_invariants(pool, std::vector<const block_table*>{&table});
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_THAT(broken[0], HasSubstr("block 1 has ref_count 1 but 0 tables hold it"));
}

TEST(pool_invariants, detects_a_block_held_twice_by_one_table) {
  block_pool pool(4, 16);
  block_table table(16);
  block_id b = pool.allocate(1)->front();
  pool.retain(b);
  table.append(b);
  table.append(b);
  auto broken = check_invariants(pool, std::vector<const block_table*>{&table});
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_THAT(broken[0], HasSubstr("holds block 0 twice"));
}

TEST(pool_invariants, host_pool_is_sound_through_swaps) {
  swap_space space(5);
  space.swap_out(1, std::vector<block_id>{3, 4});
  space.swap_out(2, std::vector<block_id>{0});
  EXPECT_THAT(check_invariants(space), IsEmpty());
  space.release(1);
  EXPECT_THAT(check_invariants(space), IsEmpty());
}

// Thousands of random operations of every kind — prefill in chunks, decode,
// fork with copy-on-write, finish, preemption by recompute and by swap —
// over prompts that share prefixes; the invariants hold after each one and
// at idle every block is free or cached.
class random_workload {
public:
  explicit random_workload(uint32_t seed) : rng_(seed) {}

  void step() {
    switch (pick(8)) {
      case 0: add(); break;
      case 1: case 2: advance(); break;
      case 3: fork(); break;
      case 4: finish(); break;
      case 5: preempt_by_recompute(); break;
      case 6: swap_out(); break;
      case 7: swap_in(); break;
    }
  }

  void finish_all() {
    for (auto& s : live_)
      release(*s);
    live_.clear();
  }

  std::vector<std::string> broken() const {
    std::vector<const block_table*> tables;
    for (const auto& s : live_)
      tables.push_back(&s->kv.table());
    auto out = check_invariants(mgr_.pool(), tables);
    for (auto& line : check_invariants(host_))
      out.push_back(std::move(line));
    return out;
  }

  const block_allocator& manager() const { return mgr_; }
  const swap_space& host() const { return host_; }
  int num_copies() const { return num_copies_; }

private:
  static constexpr int32_t bs = 8;

  // A sequence as the workload drives it: what the cache holds, and where
  // it stands (the scheduler's part).
  enum class stage { waiting, running, swapped };
  struct live_sequence {
    kv_sequence kv;
    stage status = stage::waiting;
  };

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  live_sequence* any(stage status) {
    std::vector<live_sequence*> candidates;
    for (auto& s : live_)
      if (s->status == status)
        candidates.push_back(s.get());
    return candidates.empty() ? nullptr : candidates[pick(int(candidates.size()))];
  }

  void add() {
    if (live_.size() >= 24)
      return;
    // One of four shared prefixes, then a private tail.
    auto prompt = token_run(bs * pick(5), 1000 * pick(4));
    auto tail = token_run(1 + pick(30), 100000 + 100 * next_id_);
    live_.push_back(std::make_unique<live_sequence>(
      live_sequence{kv_sequence(next_id_++, concat(prompt, tail), bs)}));
  }

  void advance() {
    live_sequence* s = any(stage::waiting);
    if (!s || pick(2))
      s = any(stage::running);
    if (!s)
      return;
    const int32_t n = std::min(s->kv.num_uncomputed_tokens(), 1 + pick(20));
    if (n == 0) { // decode: a new token, then compute it next time
      s->kv.append_token(pick(50));
      return;
    }
    if (auto copies = compute(mgr_, s->kv, n)) {
      num_copies_ += int(copies->size());
      s->status = stage::running;
    }
  }

  void fork() {
    live_sequence* s = any(stage::running);
    if (!s || live_.size() >= 24)
      return;
    live_.push_back(std::make_unique<live_sequence>(
      live_sequence{mgr_.fork(s->kv, next_id_++), stage::running}));
  }

  void release(live_sequence& s) {
    if (s.status == stage::swapped)
      host_.release(s.kv.id());
    mgr_.free(s.kv);
  }

  void finish() {
    if (live_.empty())
      return;
    auto i = live_.begin() + pick(int(live_.size()));
    release(**i);
    live_.erase(i);
  }

  void preempt_by_recompute() {
    if (live_sequence* s = any(stage::running)) {
      mgr_.free(s->kv);
      s->kv.reset_computed();
      s->status = stage::waiting;
    }
  }

  void swap_out() {
    live_sequence* s = any(stage::running);
    if (!s || !host_.swap_out(s->kv.id(), s->kv.table().blocks()))
      return;
    mgr_.free(s->kv);
    s->status = stage::swapped;
  }

  void swap_in() {
    live_sequence* s = any(stage::swapped);
    if (!s || !mgr_.allocate_for_swap_in(s->kv, int32_t(host_.host_blocks(s->kv.id()).size())))
      return;
    host_.release(s->kv.id());
    s->status = stage::running;
  }

  std::mt19937 rng_;
  block_allocator mgr_{40, bs};
  swap_space host_{24};
  std::vector<std::unique_ptr<live_sequence>> live_;
  seq_id next_id_ = 1;
  int num_copies_ = 0;
};

TEST(pool_invariants, hold_through_thousands_of_random_operations) {
  random_workload w(20261122);
  for (int i = 0; i < 20000; ++i) {
    w.step();
    auto broken = w.broken();
    ASSERT_THAT(broken, IsEmpty()) << "after operation " << i;
  }
  auto f = w.manager().figures();
  // The workload really exercised sharing, copying and eviction.
  EXPECT_GT(f.num_prefix_hits, 0);
  EXPECT_GT(f.num_evictions, 0);
  EXPECT_GT(w.num_copies(), 0);

  w.finish_all();
  EXPECT_THAT(w.broken(), IsEmpty());
  EXPECT_EQ(w.manager().pool().num_used_blocks(), 0);
  EXPECT_EQ(w.host().num_free_blocks(), w.host().num_blocks());
}

} // namespace
} // namespace kvactor
