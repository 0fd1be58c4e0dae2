// The stress tool's own parts: the workload and fault plan are reproducible
// from the seed, and the checker catches each kind of broken run.

#include "tools/stress/checker.hpp"
#include "tools/stress/fault_plan.hpp"
#include "tools/stress/workload.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace kvactor::stress {
namespace {

using ::testing::HasSubstr;

request_record ended_ok(std::vector<int32_t> tokens) {
  request_record r;
  r.sent = r.accepted = true;
  r.tokens = tokens;
  r.done_tokens = tokens;
  r.num_dones = 1;
  r.finish_reason = finish_reason::max_tokens;
  return r;
}

end_state idle() {
  end_state s;
  s.device_blocks_total = 64;
  s.host_blocks_total = s.host_blocks_free = 32;
  return s;
}

TEST(stress_workload, same_seed_same_requests_other_seed_other_requests) {
  workload_options o;
  o.num_requests = 50;
  o.rate = 100;
  auto a = make_workload(o), b = make_workload(o);
  o.seed = 2;
  auto c = make_workload(o);
  ASSERT_EQ(a.size(), 50u);
  int32_t num_shared = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].request.prompt_tokens, b[i].request.prompt_tokens);
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_GT(a[i].request.max_tokens, 0);
    if (i > 0) {
      EXPECT_GE(a[i].arrival_s, a[i - 1].arrival_s);
    }
    num_shared += a[i].request.prompt_tokens != c[i].request.prompt_tokens ? 0 : 1;
  }
  EXPECT_LT(num_shared, 25);
}

TEST(stress_workload, some_seeded_requests_ask_for_several_choices) {
  workload_options o;
  o.num_requests = 400;
  const auto w = make_workload(o);
  const auto n = choices_of(w);
  ASSERT_EQ(n.size(), w.size());
  int32_t several = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(n[i], w[i].request.n);
    if (n[i] > 1) {
      ++several;
      EXPECT_LE(n[i], 4);
      EXPECT_GT(w[i].request.temperature, 0.0f) << "request " << i; // greedy choices are alike
    }
  }
  EXPECT_GT(several, 0);

  o.choices_fraction = 0;
  const auto plain = make_workload(o);
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(plain[i].request.n, 1);
    // The other fields stay those of the same seed.
    EXPECT_EQ(plain[i].request.prompt_tokens, w[i].request.prompt_tokens);
    EXPECT_EQ(plain[i].request.seed, w[i].request.seed);
  }
}

TEST(stress_fault_plan, cancels_about_the_asked_fraction) {
  workload_options o;
  o.num_requests = 1000;
  auto plan = make_fault_plan(make_workload(o), {.seed = 3, .cancel_fraction = 0.3});
  int32_t num_cancels = 0;
  for (const auto& f : plan)
    num_cancels += f.cancel_at != no_fault ? 1 : 0;
  EXPECT_GT(num_cancels, 200);
  EXPECT_LT(num_cancels, 400);
}

TEST(stress_fault_plan, jitter_delays_each_cancel_and_leaves_the_other_faults_alone) {
  workload_options o;
  o.num_requests = 500;
  const auto workload = make_workload(o);
  fault_options f{.seed = 5, .cancel_fraction = 0.3, .disconnect_fraction = 0.1,
                  .malformed_fraction = 0.1};
  const auto plain = make_fault_plan(workload, f);
  f.jitter_ms = 7;
  const auto jittered = make_fault_plan(workload, f);
  ASSERT_EQ(plain.size(), jittered.size());
  std::set<int32_t> delays;
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(plain[i].cancel_at, jittered[i].cancel_at);
    EXPECT_EQ(plain[i].disconnect_at, jittered[i].disconnect_at);
    EXPECT_EQ(plain[i].malformed_before, jittered[i].malformed_before);
    EXPECT_EQ(plain[i].cancel_delay_ms, 0);
    if (jittered[i].cancel_at == no_fault) {
      EXPECT_EQ(jittered[i].cancel_delay_ms, 0);
    } else {
      delays.insert(jittered[i].cancel_delay_ms);
    }
  }
  EXPECT_EQ(delays, (std::set<int32_t>{0, 1, 2, 3, 4, 5, 6, 7})); // every delay in 0..7 ms
}

TEST(stress_checker, a_clean_run_passes_with_its_counts) {
  std::vector<request_record> records = {ended_ok({1, 2}), ended_ok({3})};
  records[1].finish_reason = finish_reason::aborted;
  records[1].cancel_sent = true;
  auto c = check_run(records, {std::vector<int32_t>{1, 2}, std::nullopt}, idle());
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(c.summary(), "requests 2 choices 2 ok 1 aborted 1 errors 0 mismatches 0 leaked_blocks "
                         "0 duplicates 0 missing 0");
}

TEST(stress_checker, catches_a_duplicate_end_and_a_missing_one) {
  std::vector<request_record> records = {ended_ok({1}), ended_ok({2})};
  records[0].num_dones = 2;
  records[1].num_dones = 0;
  auto c = check_run(records, {}, idle());
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.num_duplicates, 1);
  EXPECT_EQ(c.num_missing, 1);
}

TEST(stress_checker, catches_an_output_that_differs_from_the_reference) {
  auto c = check_run({ended_ok({1, 2, 3})}, {std::vector<int32_t>{1, 5, 3}}, idle());
  EXPECT_EQ(c.num_mismatches, 1);
  ASSERT_FALSE(c.failures.empty());
  EXPECT_THAT(c.failures[0], HasSubstr("first difference at token 1"));
}

// A request of several choices: each choice a record, counted and named.
TEST(stress_checker, counts_requests_and_names_the_choice_at_fault) {
  std::vector<request_record> records = {ended_ok({1}), ended_ok({2}), ended_ok({3})};
  for (int32_t c = 0; c < 2; ++c) {
    records[size_t(c) + 1].request = 1;
    records[size_t(c) + 1].choice = c;
    records[size_t(c) + 1].num_choices = 2;
  }
  auto c = check_run(records, {std::nullopt, std::nullopt, std::vector<int32_t>{4}}, idle());
  EXPECT_EQ(c.num_requests, 2);
  EXPECT_EQ(c.num_choices, 3);
  EXPECT_EQ(c.num_mismatches, 1);
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_THAT(c.failures[0], HasSubstr("request r1 choice 1 output differs"));
}

TEST(stress_checker, catches_gaps_late_events_and_uncalled_aborts) {
  auto r = ended_ok({1, 2});
  r.num_index_gaps = 1;
  r.num_events_after_end = 1;
  r.finish_reason = finish_reason::aborted;
  auto c = check_run({r}, {}, idle());
  EXPECT_EQ(c.failures.size(), 3u);
  EXPECT_EQ(c.num_mismatches, 1);
}

TEST(stress_checker, catches_leaked_blocks_and_broken_invariants) {
  auto s = idle();
  s.device_blocks_used = 2;
  s.host_blocks_free = 31;
  s.swapped = 1;
  s.broken_invariants = {"block 3 is free and held"};
  auto c = check_run({ended_ok({1})}, {}, s);
  EXPECT_EQ(c.num_leaked_blocks, 3);
  EXPECT_EQ(c.failures.size(), 4u);
  EXPECT_FALSE(check_run({ended_ok({1})}, {}, std::nullopt).passed());
}

TEST(stress_checker, a_disconnected_request_leaves_no_trace_and_counts_as_aborted) {
  request_record r;
  r.sent = r.accepted = r.disconnected = true;
  auto c = check_run({r}, {}, idle());
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(c.num_aborted, 1);
  EXPECT_EQ(c.num_disconnected, 1);
}

} // namespace
} // namespace kvactor::stress
