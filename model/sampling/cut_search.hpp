#pragma once
// cut_search: where a filter cuts a row of weights (row_ops.hpp's order:
// weight descending, then id ascending) without sorting the row.
//
//   1. bisect the weight range with vectorised passes over the whole row
//      (row_ops::at_least) until few elements lie between a weight whose
//      top set is short of the target and one whose top set reaches it;
//   2. gather those few (row_ops::next_in) and select among them by
//      partitioning (a quickselect that carries the measure above).
// Cost: a few passes over the row plus O(gathered), whatever the
// distribution's shape: flat rows (a random model's) and peaked ones alike.

#include <cstdint>
#include <vector>

#include "model/sampling/row_ops.hpp"

namespace kvactor::model::sampling {

struct candidate {
  float w = 0.0f;
  int32_t id = 0;
};

// Which measure a filter counts: the elements (top-k) or their mass (top-p).
enum class measure_by : uint8_t { count, mass };

// A thread's buffers for find_cut, grown as rows need.
struct cut_scratch {
  std::vector<float> w;
  std::vector<int32_t> id;
  std::vector<candidate> gathered;
};

// The cut of the smallest top set of w[0, n) among the elements at or above
// `floor` whose measure reaches `target`; `total` is the measure of all the
// elements at or above `floor`. When it does not exceed `target`, that is
// `floor` itself.
row_cut find_cut(const row_ops& ops, const float* w, int64_t n, row_cut floor, row_measure total,
                 measure_by by, double target, cut_scratch& scratch);

} // namespace kvactor::model::sampling
