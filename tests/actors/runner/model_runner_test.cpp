// model_runner without actors: plans in, sampled tokens out, against the
// paged forward pass run alone (tiny_serving.hpp). Checks what the actor
// tests cannot pin down: copy-on-write copies run before the step's forward,
// swaps move the right bytes between the pools, and sampled tokens go to
// the right sequences.

#include "actors/runner/model_runner.hpp"
#include "tiny_serving.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

namespace kvactor {
namespace {

using ::testing::ElementsAre;
using testing::greedy_alone;
using testing::model_dir;
using testing::tokens;

std::shared_ptr<model_runner> make_runner() {
  auto m = model::load_model_folder(model_dir(), model::dtype::f32);
  EXPECT_TRUE(m.has_value());
  model_runner_options o;
  o.kv_cache_bytes = 32 * 16384; // 32 blocks of 16 tokens (2 layers, 2 KV heads of 32, fp32)
  o.swap_bytes = 8 * 16384;
  auto r = model_runner::create(m->config, std::move(m->weights), o);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return std::move(r).value();
}

step_output run(model_runner& r, step_plan plan) {
  std::promise<step_output> p;
  auto f = p.get_future();
  r.run(std::move(plan), [&p](step_output out) { p.set_value(std::move(out)); });
  return f.get();
}

void swap(model_runner& r, swap_direction d, std::vector<block_copy> copies) {
  std::promise<void> p;
  auto f = p.get_future();
  r.swap(d, std::move(copies), [&p] { p.set_value(); });
  f.get();
}

// blocks: the change to the table the runner keeps for the sequence.
scheduled_sequence seq(seq_id id, int32_t start, std::vector<token_id> toks, table_delta blocks,
                       bool sample) {
  scheduled_sequence s;
  s.id = id;
  s.start = start;
  s.tokens = std::move(toks);
  s.blocks = std::move(blocks);
  s.sample = sample;
  s.sampling.temperature = 0.0f; // greedy
  return s;
}

std::vector<token_id> slice(const std::vector<token_id>& v, size_t b, size_t e) {
  return {v.begin() + std::ptrdiff_t(b), v.begin() + std::ptrdiff_t(e)};
}

TEST(model_runner, sizes_its_pools_from_the_budgets) {
  auto r = make_runner();
  EXPECT_EQ(r->num_device_blocks(), 32);
  EXPECT_EQ(r->num_host_blocks(), 8);
  EXPECT_EQ(r->block_size(), 16);
}

TEST(model_runner, copy_on_write_runs_before_the_forward_pass) {
  auto r = make_runner();
  const auto prompt = tokens(20, 3); // one full block and 4 tokens of the next
  // Block 7 first holds someone else's K/V.
  const auto other = tokens(20, 50);
  run(*r, {1, {}, {seq(9, 0, other, {0, {6, 7}}, false)}, {}});
  // A prefills into blocks 2, 3.
  step_output out = run(*r, {2, {}, {seq(1, 0, prompt, {0, {2, 3}}, true)}, {}});
  ASSERT_EQ(out.sampled.size(), 1u);
  const token_id a_first = out.sampled[0].token;
  EXPECT_EQ(a_first, greedy_alone(prompt, 1)[0]);

  // B forks A: shares block 2, gets a copy of the partial block 3 in block 7
  // in the same step that computes its first token; a third sequence is
  // mid-prefill and samples nothing.
  const token_id b_token = (a_first + 1) % 400;
  auto b_prompt = prompt;
  b_prompt.push_back(b_token);
  auto a_prompt = prompt;
  a_prompt.push_back(a_first);
  const auto c_prompt = tokens(40, 9);
  step_plan plan{3, {{3, 7}}, {}, {}};
  plan.seqs.push_back(seq(1, 20, {a_first}, {2, {}}, true)); // keeps its table
  plan.seqs.push_back(seq(5, 0, slice(c_prompt, 0, 24), {0, {10, 11, 12}}, false));
  plan.seqs.push_back(seq(2, 20, {b_token}, {0, {2, 7}}, true));
  out = run(*r, std::move(plan));
  EXPECT_EQ(out.step_id, 3u);
  ASSERT_EQ(out.sampled.size(), 2u);
  EXPECT_EQ(out.sampled[0].id, 1u);
  EXPECT_EQ(out.sampled[0].token, greedy_alone(a_prompt, 1)[0]);
  EXPECT_EQ(out.sampled[1].id, 2u);
  EXPECT_EQ(out.sampled[1].token, greedy_alone(b_prompt, 1)[0]);

  // The rest of C's prompt completes it.
  out = run(*r, {4, {}, {seq(5, 24, slice(c_prompt, 24, 40), {3, {}}, true)}, {}});
  ASSERT_EQ(out.sampled.size(), 1u);
  EXPECT_EQ(out.sampled[0].token, greedy_alone(c_prompt, 1)[0]);
}

TEST(model_runner, swapped_blocks_come_back_into_other_blocks) {
  auto r = make_runner();
  const auto prompt = tokens(30, 11);
  step_output out = run(*r, {1, {}, {seq(1, 0, prompt, {0, {4, 5}}, true)}, {}});
  const token_id first = out.sampled.at(0).token;
  swap(*r, swap_direction::out, {{4, 6}, {5, 1}});
  // Blocks 4 and 5 are reused meanwhile.
  run(*r, {2, {}, {seq(2, 0, tokens(32, 77), {0, {5, 4}}, true)}, {}});
  swap(*r, swap_direction::in, {{6, 20}, {1, 13}});
  // The runner still holds 1's old table {4, 5}: the plan starts it over.
  out = run(*r, {3, {}, {seq(1, 30, {first}, {0, {20, 13}}, true)}, {}});
  auto history = prompt;
  history.push_back(first);
  EXPECT_THAT(out.sampled, ::testing::SizeIs(1));
  EXPECT_EQ(out.sampled.at(0).token, greedy_alone(history, 1)[0]);
  EXPECT_EQ(greedy_alone(prompt, 2), (std::vector<int32_t>{first, out.sampled.at(0).token}));
}

TEST(model_runner, keeps_each_tables_blocks_between_steps) {
  auto r = make_runner();
  const auto prompt = tokens(15, 5);
  auto history = prompt;
  step_output out = run(*r, {1, {}, {seq(1, 0, prompt, {0, {9}}, true)}, {}});
  history.push_back(out.sampled.at(0).token);
  // Position 15 fills block 9; 16 and 17 go into block 2, added by the step
  // that first writes it.
  const std::vector<table_delta> changes = {{1, {}}, {1, {2}}, {2, {}}};
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto pos = int32_t(history.size()) - 1;
    out = run(*r, {2 + i, {}, {seq(1, pos, {history.back()}, changes[i], true)}, {}});
    EXPECT_EQ(out.sampled.at(0).token, greedy_alone(history, 1)[0]) << "position " << pos;
    history.push_back(out.sampled.at(0).token);
  }
}

TEST(model_runner, a_plan_of_copies_only_answers_with_no_tokens) {
  auto r = make_runner();
  const step_output out = run(*r, {8, {{1, 2}}, {}, {}});
  EXPECT_EQ(out.step_id, 8u);
  EXPECT_TRUE(out.sampled.empty());
}

// A constrained sequence: the runner masks its row by its grammar, moves
// the grammar past each token, says when only the end may follow, and drops
// the sequence's grammar when it is released.
TEST(model_runner, constrained_rows_draw_what_their_grammar_allows_until_it_ends) {
  auto m = model::load_model_folder(model_dir(), model::dtype::f32);
  ASSERT_TRUE(m.has_value());
  auto compiler = std::make_shared<constraint_compiler>(model::vocabulary_of(
    m->tok, {m->config.eos_token_ids.begin(), m->config.eos_token_ids.end()},
    static_cast<size_t>(m->config.vocab_size)));
  auto r = make_runner();
  r->use_constraints(compiler);
  const output_constraint yes_no{constraint_kind::choice, {}, {"yes", "no"}};
  scheduled_sequence s = seq(1, 0, tokens(12, 5), {0, {0}}, true);
  s.sampling.temperature = 1.0f;
  s.sampling.seed = 3;
  s.constraint = yes_no;
  std::string text;
  step_output out = run(*r, {1, {}, {s}, {}});
  EXPECT_EQ(r->num_grammar_states(), 1u);
  int32_t pos = 12;
  for (uint64_t step = 2; step < 12; ++step) {
    const sampled_token t = out.sampled.at(0);
    text += m->tok.token_bytes(t.token);
    if (t.must_end)
      break;
    // NOTE: blocks of 16 tokens: position 16 opens the second.
    scheduled_sequence next =
      seq(1, pos, {t.token}, pos == 16 ? table_delta{1, {1}} : table_delta{1, {}}, true);
    ++pos;
    next.sampling = s.sampling;
    next.num_output_tokens = static_cast<int32_t>(step - 1);
    out = run(*r, {step, {}, {next}, {}});
  }
  EXPECT_TRUE(text == "yes" || text == "no") << text;
  run(*r, {20, {}, {}, {1}});
  EXPECT_EQ(r->num_grammar_states(), 0u);
}

} // namespace
} // namespace kvactor
