#include "model/sampling/cut_search.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kvactor::model::sampling {

namespace {

bool better(const candidate& a, const candidate& b) {
  return a.w != b.w ? a.w > b.w : a.id < b.id;
}

bool at_or_above(float w, int32_t id, row_cut cut) {
  return w > cut.w || (w == cut.w && id <= cut.id);
}

// Bisection stops once the bracket holds at most this many elements (or a
// 512th of a larger row): a pass over the row costs about what selecting
// among that many gathered elements does.
constexpr int64_t gather_below = 256;
constexpr size_t sort_below = 16;

double value(measure_by by, const row_measure& m) {
  return by == measure_by::mass ? m.mass : static_cast<double>(m.count);
}

// Among c (no two alike), the element at which measure `above` plus the
// measure of the best elements up to it first reaches target.
row_cut select(std::vector<candidate>& c, measure_by by, double above, double target) {
  const auto weight = [by](const candidate& x) { return by == measure_by::mass ? x.w : 1.0; };
  size_t lo = 0, hi = c.size();
  while (hi - lo > sort_below) {
    // NOTE: the median of three distinct elements is never the worst, so
    // both sides of the partition are non-empty and the range shrinks.
    candidate a = c[lo], b = c[lo + (hi - lo) / 2], d = c[hi - 1];
    if (better(b, a))
      std::swap(a, b);
    if (better(d, b))
      std::swap(b, d);
    if (better(b, a))
      std::swap(a, b);
    const candidate pivot = b;
    const auto mid = std::partition(c.begin() + ptrdiff_t(lo), c.begin() + ptrdiff_t(hi),
                                    [&](const candidate& x) { return !better(pivot, x); });
    const size_t j = size_t(mid - c.begin());
    double front = 0;
    for (size_t i = lo; i < j; ++i)
      front += weight(c[i]);
    if (above + front >= target) {
      hi = j;
    } else {
      above += front;
      lo = j;
    }
  }
  std::sort(c.begin() + ptrdiff_t(lo), c.begin() + ptrdiff_t(hi), better);
  for (size_t i = lo; i < hi; ++i) {
    above += weight(c[i]);
    if (above >= target)
      return {c[i].w, c[i].id};
  }
  // NOTE: sums in another order fell just short: the whole range is in.
  return {c[hi - 1].w, c[hi - 1].id};
}

} // namespace

row_cut find_cut(const row_ops& ops, const float* w, int64_t n, row_cut floor, row_measure total,
                 measure_by by, double target, cut_scratch& scratch) {
  if (value(by, total) <= target || total.count == 0)
    return floor;
  // The top set at weight lo reaches the target; the one at hi falls short.
  uint32_t lo = std::bit_cast<uint32_t>(floor.w);
  uint32_t hi = std::bit_cast<uint32_t>(1.0f) + 1; // above every weight
  row_measure at_lo = total, at_hi{};
  if (by == measure_by::mass) {
    // NOTE: what the top set leaves out weighs more than total - target -
    // w_cut (else a smaller set would do) and at most count * w_cut, so the
    // cut's weight exceeds (total - target) / count: start the search there.
    const auto bound = static_cast<float>((total.mass - target) / double(total.count) * 0.999);
    if (bound > floor.w) {
      const row_measure m = ops.at_least(w, n, bound);
      if (value(by, m) >= target) {
        lo = std::bit_cast<uint32_t>(bound);
        at_lo = m;
      }
    }
  }
  // NOTE: weights are non-negative floats, whose bits order as they do; a
  // midpoint above lo lies above the floor, so a plain pass measures it.
  const int64_t few = std::max<int64_t>(gather_below, n / 512);
  while (at_lo.count - at_hi.count > few && hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const row_measure m = ops.at_least(w, n, std::bit_cast<float>(mid));
    if (value(by, m) >= target) {
      lo = mid;
      at_lo = m;
    } else {
      hi = mid;
      at_hi = m;
    }
  }
  scratch.w.resize(size_t(n + row_slack));
  scratch.id.resize(size_t(n + row_slack));
  const int64_t num = ops.gather(w, n, std::bit_cast<float>(lo), std::bit_cast<float>(hi),
                                 scratch.w.data(), scratch.id.data());
  std::vector<candidate>& c = scratch.gathered;
  c.clear();
  for (int64_t i = 0; i < num; ++i)
    if (at_or_above(scratch.w[size_t(i)], scratch.id[size_t(i)], floor))
      c.push_back({scratch.w[size_t(i)], scratch.id[size_t(i)]});
  if (c.empty()) // rounding between passes; the floor keeps everything
    return floor;
  return select(c, by, value(by, at_hi), target);
}

} // namespace kvactor::model::sampling
