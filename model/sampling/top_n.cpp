#include "model/sampling/top_n.hpp"

#include <algorithm>

namespace kvactor::model::sampling {

void top_n(const row_ops& ops, const float* x, int64_t size, size_t n, float bar,
           std::vector<candidate>& out) {
  out.clear();
  if (n == 0)
    return;
  out.reserve(n + 1);
  const auto better = [](const candidate& a, const candidate& b) {
    return a.w != b.w ? a.w > b.w : a.id < b.id;
  };
  for (int64_t i = ops.next_at_least(x, 0, size, bar); i < size;
       i = ops.next_at_least(x, i + 1, size, bar)) {
    const candidate c{x[i], static_cast<int32_t>(i)};
    if (out.size() == n && !better(c, out.back()))
      continue; // equal to the n-th best, at a higher index
    out.insert(std::upper_bound(out.begin(), out.end(), c, better), c);
    if (out.size() > n)
      out.pop_back();
    if (out.size() == n)
      bar = out.back().w;
  }
}

} // namespace kvactor::model::sampling
