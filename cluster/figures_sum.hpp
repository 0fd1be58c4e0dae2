#pragma once
// sum_figures: a front's runtime_figures from its live workers' — counts and
// seconds add up, rates are recomputed from the sums, histograms add bucket by
// bucket (a histogram whose bounds differ from the first one's is left out),
// broken invariants keep the worker's address in front.

#include "kvactor/kvactor.hpp"

#include <string>
#include <vector>

namespace kvactor::cluster {

struct addressed_figures {
  std::string address;
  runtime_figures figures;
};

runtime_figures sum_figures(const std::vector<addressed_figures>& parts);

} // namespace kvactor::cluster
