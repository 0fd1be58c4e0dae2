// kvactor-bench-grammar: what an output constraint costs a sampled row, on a
// real tokenizer's vocabulary — the grammar's compile time, then for --seqs
// sequences generating --steps tokens each (a random allowed token at each
// step, as a model of random weights picks), the time of each step's mask:
// cold (the first sequences, making each new state's mask from its tops'
// splits) and warm (the same sequences again: the cached masks), and
// applying a mask to a row of logits. For any JSON object, a 20-property
// JSON Schema and a regular expression.
//
// Then --seqs other sequences of the same grammar: new states, whose tops
// the first ones met (what a server in use sees). --no-splits makes every
// new state's mask walk the whole vocabulary instead, to compare.
//
//   kvactor-bench-grammar --tokenizer=PATH/tokenizer.json [--steps=64] [--seqs=8] [--no-splits]

#include "model/grammar/json_schema_grammar.hpp"
#include "model/grammar/regex_grammar.hpp"
#include "model/grammar/token_grammar.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace kvactor;
using namespace kvactor::model;

namespace {

using clock_type = std::chrono::steady_clock;

double us_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
}

struct options {
  std::string tokenizer;
  int steps = 64;
  int seqs = 8;
  bool splits = true; // --no-splits: every new state walks the whole vocabulary
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&](std::string_view name) -> const char* {
      return a.starts_with(name) ? argv[i] + name.size() : nullptr;
    };
    if (const char* t = value("--tokenizer="))
      o.tokenizer = t;
    else if (const char* s = value("--steps="))
      o.steps = std::atoi(s);
    else if (const char* n = value("--seqs="))
      o.seqs = std::atoi(n);
    else if (a == "--no-splits")
      o.splits = false;
    else
      return false;
  }
  return !o.tokenizer.empty() && o.steps > 0 && o.seqs > 0;
}

// A user's record of 20 fields of every kind.
std::string twenty_properties() {
  std::string props, required;
  const char* kinds[] = {
    R"({"type": "string", "maxLength": 24})",
    R"({"type": "integer"})",
    R"({"type": "number"})",
    R"({"type": "boolean"})",
    R"({"enum": ["draft", "sent", "paid", "void"]})",
    R"({"type": "string", "format": "date"})",
    R"({"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 4})",
    R"({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]})"};
  for (int i = 0; i < 20; ++i) {
    const std::string name = "field_" + std::to_string(i);
    props += (i ? ", \"" : "\"") + name + "\": " + kinds[i % 8];
    if (i % 3 != 2) required += (required.empty() ? "\"" : ", \"") + name + "\"";
  }
  return R"({"type": "object", "properties": {)" + props + "}, \"required\": [" + required + "]}";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::ranges::sort(v);
  return v[v.size() / 2];
}

// Generates from `g` as a random model would: each sequence's mask per
// step (timed), then a random token among those it allows.
struct run_figures {
  std::vector<double> mask_us;
  int tokens = 0;
  int ended = 0;
};

// Sequences first_seed .. first_seed + o.seqs - 1.
run_figures generate(const std::shared_ptr<const token_grammar>& g, const options& o,
                     int first_seed) {
  run_figures f;
  for (int s = 0; s < o.seqs; ++s) {
    std::mt19937_64 rng(static_cast<uint64_t>(first_seed + s));
    token_matcher m(g);
    for (int step = 0; step < o.steps; ++step) {
      const auto t0 = clock_type::now();
      auto mask = m.mask();
      f.mask_us.push_back(us_since(t0));
      std::vector<token_id> allowed;
      for (size_t id = 0; id < g->vocabulary().vocab_size(); ++id)
        if (mask->allows(static_cast<token_id>(id)) && !g->vocabulary().is_end(token_id(id)))
          allowed.push_back(static_cast<token_id>(id));
      if (allowed.empty()) break;
      m.accept(allowed[rng() % allowed.size()]);
      ++f.tokens;
      if (m.must_end()) {
        ++f.ended;
        break;
      }
    }
  }
  return f;
}

void bench(std::string_view name, const std::function<result<grammar>()>& build,
           const std::shared_ptr<const token_vocabulary>& vocab, const options& o) {
  const auto t0 = clock_type::now();
  auto g = build();
  const double compile_us = us_since(t0);
  if (!g) {
    std::fprintf(stderr, "%.*s: %s\n", int(name.size()), name.data(), g.error().message.c_str());
    std::exit(1);
  }
  token_grammar_limits limits;
  limits.max_cached_bytes = size_t{256} << 20;
  limits.split_tops = o.splits;
  auto tg = std::make_shared<const token_grammar>(std::make_shared<const grammar>(std::move(*g)),
                                                  vocab, limits);
  const run_figures cold = generate(tg, o, 1);
  const int64_t walks = tg->num_walks();
  const run_figures warm = generate(tg, o, 1);
  // Other sequences of a grammar in use: new states, known tops.
  const run_figures next = generate(tg, o, 1 + o.seqs);
  const int64_t next_walks = tg->num_walks() - walks;
  auto mean = [](const std::vector<double>& v) {
    double total = 0;
    for (double us : v) total += us;
    return v.empty() ? 0 : total / double(v.size());
  };
  std::printf("%-22.*s compile %8.0f us  masks: cold median %6.1f us, mean %6.1f "
              "us (%lld walks over %zu steps); warm median %5.2f us; other sequences mean %6.1f "
              "us (%lld walks)  (%d tokens, %d of %d sequences ended)\n",
              int(name.size()), name.data(), compile_us, median(cold.mask_us),
              mean(cold.mask_us), static_cast<long long>(walks), cold.mask_us.size(),
              median(warm.mask_us), mean(next.mask_us), static_cast<long long>(next_walks),
              cold.tokens, cold.ended, o.seqs);
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: kvactor-bench-grammar --tokenizer=PATH/tokenizer.json [--steps=N] "
                         "[--seqs=N] [--no-splits]\n");
    return 2;
  }
  auto tok = tokenizer::load(o.tokenizer);
  if (!tok) {
    std::fprintf(stderr, "%s\n", tok.error().message.c_str());
    return 1;
  }
  const auto t0 = clock_type::now();
  auto vocab = vocabulary_of(*tok, {}, tok->vocab_size());
  std::printf("vocabulary: %zu ids, %zu that grammars read; sorted in %.0f ms\n", vocab->num_ids(),
              vocab->sorted().size(), us_since(t0) / 1000);
  bench(
    "json_object", [] { return result<grammar>(json_object_grammar()); }, vocab, o);
  const std::string schema = twenty_properties();
  bench(
    "json_schema 20 fields", [&] { return json_schema_grammar(schema); }, vocab, o);
  bench(
    "regex",
    [] {
      return regex_grammar(R"([a-z]{3,12}@[a-z]{2,8}\.(com|org|net) [0-9]{4}-[0-9]{2}-[0-9]{2})");
    },
    vocab, o);

  token_mask half;
  half.bits.assign((vocab->vocab_size() + 63) / 64, 0x5555555555555555ull);
  std::vector<float> row(vocab->vocab_size(), 1.0f);
  std::vector<double> us;
  for (int r = 0; r < 200; ++r) {
    std::ranges::fill(row, 1.0f);
    const auto t = clock_type::now();
    apply_mask(row, half);
    us.push_back(us_since(t));
  }
  std::printf("apply_mask over %zu logits (half refused): median %.1f us\n", row.size(),
              median(us));
}
