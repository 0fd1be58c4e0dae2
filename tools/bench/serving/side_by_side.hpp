#pragma once
// side_by_side: one workload sent by one client to servers speaking the
// OpenAI completions API (kvactor's HTTP front and another engine), at each
// concurrency, the servers alternating within every repetition, so that a
// ratio of their figures is measured under one machine load. Every request:
// a random token-id prompt of prompt_len tokens, output_len tokens out,
// ignoring EOS; all sent at once, at most `concurrency` in flight; each
// concurrency greedy, then sampled (temperature 0.8, top_p 0.95, seeded:
// the same fields to every server).

#include "tools/bench/serving/metrics.hpp"
#include "tools/bench/serving/openai_driver.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace kvactor::bench {

enum class decoding : uint8_t { greedy, sampled };
const char* to_string(decoding d);

struct side_by_side_options {
  std::vector<openai_target> targets; // ratios are of the first to the second
  std::vector<int32_t> concurrency;
  int32_t prompt_len = 128;
  int32_t output_len = 64;
  int32_t reps = 3;      // each figure is the median of the repetitions
  int32_t vocab_size = 0;
  uint64_t seed = 1;
  bool quick = false;    // as many requests as the concurrency, one repetition
  std::vector<decoding> modes{decoding::greedy, decoding::sampled};
};

struct side_by_side_row {
  int32_t concurrency = 0;
  decoding mode = decoding::greedy;
  std::vector<run_metrics> targets; // medians over the repetitions, per target
};

// Prints each run to `log` as it ends.
std::vector<side_by_side_row> run_side_by_side(const side_by_side_options& o, std::ostream& log);

// The table: per concurrency, decoding and target, output tokens/s, TTFT
// and ITL percentiles, and the first target's ratios to the second.
void print_side_by_side(std::ostream& out, const side_by_side_options& o,
                        const std::vector<side_by_side_row>& rows);
std::string side_by_side_json(const side_by_side_options& o,
                              const std::vector<side_by_side_row>& rows);

} // namespace kvactor::bench
