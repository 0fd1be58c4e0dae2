#pragma once
// top_n: the n largest elements of a row that are at least `bar`, largest
// first and the lower index first on ties, in one vectorised scan that stops
// only at elements not below the n-th best so far (row_ops::next_at_least).
// For small n: the top-k filter and the logprobs' alternatives.

#include <cstdint>
#include <vector>

#include "model/sampling/cut_search.hpp"

namespace kvactor::model::sampling {

void top_n(const row_ops& ops, const float* x, int64_t size, size_t n, float bar,
           std::vector<candidate>& out);

} // namespace kvactor::model::sampling
