#pragma once
// report: kvactor-bench's results as one JSON document, as text on the
// terminal, and as a PNG plot of throughput and latency against concurrency
// (gnuplot).

#include "tools/bench/serving/scenarios.hpp"

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kvactor::bench {

struct bench_results {
  std::vector<comparison> comparisons;
  std::vector<run_report> sweep;
  std::optional<run_report> overhead;
};

std::string to_json(const bench_results& r);

void print_run(std::ostream& out, const run_report& r);
void print_comparison(std::ostream& out, const comparison& c);

// Writes the sweep's data, the gnuplot script and `png`; an error message
// when gnuplot is missing or fails.
std::optional<std::string> write_plot(const std::vector<run_report>& sweep,
                                      const std::filesystem::path& png);

} // namespace kvactor::bench
