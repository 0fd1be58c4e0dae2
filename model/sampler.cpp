#include "model/sampler.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "base/assert.hpp"
#include "model/rng.hpp"
#include "model/sampling/cut_search.hpp"
#include "model/sampling/row_ops.hpp"
#include "model/sampling/row_sampler.hpp"
#include "model/sampling/top_n.hpp"

namespace kvactor::model {

namespace {

using sampling::measure_by;
using sampling::row_cut;
using sampling::row_measure;
using sampling::row_ops;

// One thread's buffers, grown to the largest vocabulary seen: rows are
// sampled in parallel on the device's threads.
struct row_scratch {
  std::vector<float> logits; // the row once bias and penalties changed it
  std::vector<float> w;      // exp((logit - max) / temperature)
  std::vector<float> block_sums;
  sampling::cut_scratch cut;
};

row_scratch& scratch() {
  thread_local row_scratch s;
  return s;
}

// The row as the filters see it: bias, min_tokens and penalties applied.
std::span<const float> adjusted(std::span<const float> logits, const sampling_params& p,
                                uint64_t step, const sampling_history* history,
                                std::vector<float>& out) {
  out.assign(logits.begin(), logits.end());
  const auto valid = [&](token_id t) { return t >= 0 && size_t(t) < out.size(); };
  for (const token_bias& b : p.logit_bias)
    if (valid(b.token))
      out[size_t(b.token)] += b.bias;
  if (step < static_cast<uint64_t>(p.min_tokens))
    for (token_id t : p.min_tokens_banned)
      if (valid(t))
        out[size_t(t)] = -std::numeric_limits<float>::infinity();
  if (p.penalises()) {
    KVACTOR_ASSERT(history, "penalties need the request's history");
    history->apply_penalties(out, p);
  }
  return out;
}

constexpr int32_t small_top_k = 256;

// The cut of the tokens min_p, top_k and top_p keep, each over what the
// last kept (row_ops.hpp: row_cut).
row_cut keep_cut(const row_ops& ops, const float* w, int64_t n, double total,
                 const sampling_params& p, float* block_sums, sampling::cut_scratch& scratch) {
  row_cut cut{0.0f, -1}; // every token of positive weight
  // NOTE: the largest weight is 1, so min_p keeps the weights >= min_p.
  if (p.min_p > 0.0f)
    cut = {p.min_p, std::numeric_limits<int32_t>::max()};
  // NOTE: without min_p, every token counts (those of weight 0 never get
  // past the cut's weight or the draw).
  row_measure kept = p.min_p > 0.0f ? ops.at_least(w, n, p.min_p) : row_measure{total, n};
  if (p.top_k > 0 && p.top_k < kept.count) {
    // NOTE: a few dozen tokens (the usual top_k) come quicker from one scan.
    if (p.top_k <= small_top_k) {
      sampling::top_n(ops, w, n, size_t(p.top_k), cut.w, scratch.gathered);
      cut = {scratch.gathered.back().w, scratch.gathered.back().id};
    } else {
      cut = find_cut(ops, w, n, cut, kept, measure_by::count, p.top_k, scratch);
    }
    if (p.top_p < 1.0f)
      kept = {ops.kept_sums(w, n, cut, block_sums), p.top_k};
  }
  if (p.top_p < 1.0f)
    cut = find_cut(ops, w, n, cut, kept, measure_by::mass, double(p.top_p) * kept.mass, scratch);
  return cut;
}

// The first kept token, in vocabulary order, at which the kept mass passes
// u times its total; block_sums[b] holds the kept mass of block b.
token_id draw(const float* w, int64_t n, const float* block_sums, row_cut cut, double u) {
  const int64_t num_blocks = sampling::num_row_blocks(n);
  double total = 0;
  for (int64_t b = 0; b < num_blocks; ++b)
    total += block_sums[b];
  const double target = u * total;
  double acc = 0;
  int64_t b = 0, last_with_mass = -1;
  for (; b < num_blocks; ++b) {
    if (block_sums[b] <= 0)
      continue;
    last_with_mass = b;
    if (acc + block_sums[b] > target)
      break;
    acc += block_sums[b];
  }
  KVACTOR_ASSERT(last_with_mass >= 0, "a draw from a row with nothing kept");
  if (b == num_blocks) { // rounding: u * total came out as the total
    b = last_with_mass;
    acc -= block_sums[b];
  }
  const auto kept = [&](int64_t i) {
    return w[i] > 0 && (w[i] > cut.w || (w[i] == cut.w && i <= cut.id));
  };
  int64_t last = -1;
  const int64_t block = sampling::row_block;
  for (int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) {
    if (!kept(i))
      continue;
    last = i;
    acc += w[i];
    if (acc > target)
      return static_cast<token_id>(i);
  }
  // NOTE: the block's own sum, in another order, fell just short.
  KVACTOR_ASSERT(last >= 0, "a draw landed in a block with nothing kept");
  return static_cast<token_id>(last);
}

} // namespace

namespace sampling {

token_id greedy_row(const row_ops& ops, std::span<const float> logits) {
  KVACTOR_ASSERT(!logits.empty(), "greedy() needs logits");
  const auto n = static_cast<int64_t>(logits.size());
  const int64_t i = ops.next_at_least(logits.data(), 0, n, ops.max(logits.data(), n));
  return i < n ? static_cast<token_id>(i) : 0; // every logit NaN
}

token_id sample_row(const row_ops& ops, std::span<const float> logits, const sampling_params& p,
                    uint64_t step, const sampling_history* history) {
  KVACTOR_ASSERT(!logits.empty(), "sample() needs logits");
  row_scratch& s = scratch();
  const std::span<const float> x =
    p.changes_logits(step) ? adjusted(logits, p, step, history, s.logits) : logits;
  if (p.is_greedy())
    return greedy_row(ops, x);
  const auto n = static_cast<int64_t>(x.size());
  const float max_x = ops.max(x.data(), n);
  if (!std::isfinite(max_x)) // no distribution: every logit -inf or NaN, or one +inf
    return greedy_row(ops, x);
  s.w.resize(size_t(n));
  s.block_sums.resize(size_t(num_row_blocks(n)));
  float* w = s.w.data();
  const float total = ops.weights(x.data(), n, max_x, 1.0f / p.temperature, w, s.block_sums.data());
  row_cut cut{0.0f, -1};
  if (p.min_p > 0.0f || (p.top_k > 0 && p.top_k < n) || p.top_p < 1.0f) {
    cut = keep_cut(ops, w, n, total, p, s.block_sums.data(), s.cut);
    ops.kept_sums(w, n, cut, s.block_sums.data());
  }
  return draw(w, n, s.block_sums.data(), cut, sampling_uniform(p.seed, step));
}

} // namespace sampling

double sampling_uniform(uint64_t seed, uint64_t step) {
  return rng(mix64(seed) ^ mix64(step ^ 0x5851f42d4c957f2dull)).uniform();
}

token_id greedy(std::span<const float> logits) {
  return sampling::greedy_row(sampling::best_row_ops(), logits);
}

token_id sample(std::span<const float> logits, const sampling_params& p, uint64_t step,
                const sampling_history* history) {
  return sampling::sample_row(sampling::best_row_ops(), logits, p, step, history);
}

} // namespace kvactor::model
