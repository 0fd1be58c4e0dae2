#pragma once
// When the requests of a seeded load arrive, for the stress tool's and the
// benchmark's workloads and drivers.

#include <chrono>
#include <cstdint>
#include <random>

namespace kvactor::tools {

// s seconds (arrival times, timeouts) as a steady_clock duration.
inline std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
    std::chrono::duration<double>(s));
}

// Arrival times in seconds after the start: a Poisson process of `rate`
// requests per second, or every request at 0 when rate is 0. Each next()
// draws one gap from the workload's own generator, in its order of draws.
class arrival_clock {
public:
  explicit arrival_clock(double rate) : rate_(rate), gap_(rate > 0 ? rate : 1.0) {}

  double next(std::mt19937_64& rng) {
    if (rate_ > 0)
      now_ += gap_(rng);
    return now_;
  }

private:
  double rate_;
  std::exponential_distribution<double> gap_;
  double now_ = 0;
};

} // namespace kvactor::tools
