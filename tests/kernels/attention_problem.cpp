#include "tests/kernels/attention_problem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

namespace kvactor::kernels::testing {

std::string attention_config::name() const {
  // NOTE: a stream, not operator+: GCC 12 gives a false -Wrestrict there.
  std::ostringstream s;
  s << dtype_name(type) << " d" << head_dim << " bs" << block_size << " h" << num_heads << "/"
    << num_kv_heads << " lens";
  for (size_t i = 0; i < seq_lens.size(); ++i) {
    s << ' ' << seq_lens[i];
    if (!query_lens.empty()) s << "(q" << query_lens[i] << ')';
  }
  return s.str();
}

size_t attention_problem::out_bytes() const {
  return static_cast<size_t>(num_tokens) * static_cast<size_t>(config.num_heads) *
         static_cast<size_t>(config.head_dim) * dtype_size(config.type);
}

paged_attention_params attention_problem::params(void* out) const {
  paged_attention_params p{};
  p.out = out;
  p.query = query.data();
  p.k_cache = k_cache.data();
  p.v_cache = v_cache.data();
  p.block_tables = block_tables.data();
  p.seq_lens = seq_lens.data();
  p.query_start_loc = query_start_loc.empty() ? nullptr : query_start_loc.data();
  p.num_seqs = static_cast<int32_t>(seq_lens.size());
  p.num_tokens = num_tokens;
  p.num_heads = config.num_heads;
  p.num_kv_heads = config.num_kv_heads;
  p.head_dim = config.head_dim;
  p.block_size = config.block_size;
  p.max_blocks_per_seq = max_blocks_per_seq;
  p.scale = 1.0f / std::sqrt(static_cast<float>(config.head_dim));
  p.type = config.type;
  p.query_stride = config.query_pad > 0 ? config.num_heads * config.head_dim + config.query_pad : 0;
  return p;
}

attention_problem make_attention_problem(const attention_config& config, uint32_t seed) {
  attention_problem pr;
  pr.config = config;
  pr.seq_lens = config.seq_lens;
  const auto num_seqs = static_cast<int32_t>(config.seq_lens.size());
  if (config.query_lens.empty()) {
    pr.num_tokens = num_seqs;
  } else {
    pr.query_start_loc.push_back(0);
    for (int32_t q : config.query_lens) pr.query_start_loc.push_back(pr.query_start_loc.back() + q);
    pr.num_tokens = pr.query_start_loc.back();
  }
  const int32_t bs = config.block_size;
  int32_t total_blocks = 0;
  for (int32_t len : config.seq_lens) {
    const int32_t n = (len + bs - 1) / bs;
    pr.max_blocks_per_seq = std::max(pr.max_blocks_per_seq, n);
    total_blocks += n;
  }
  // NOTE: spare blocks and a shuffled id order make the tables scattered and
  // non-monotonic; table entries past a sequence's blocks are -1.
  pr.num_blocks = total_blocks + 3;
  std::mt19937 rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(pr.num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  pr.block_tables.assign(static_cast<size_t>(num_seqs) * static_cast<size_t>(pr.max_blocks_per_seq),
                         -1);
  size_t next = 0;
  for (int32_t s = 0; s < num_seqs; ++s)
    for (int32_t b = 0; b < (config.seq_lens[static_cast<size_t>(s)] + bs - 1) / bs; ++b)
      pr.block_tables[static_cast<size_t>(s * pr.max_blocks_per_seq + b)] = ids[next++];

  const size_t elem = dtype_size(config.type);
  const size_t row =
    static_cast<size_t>(config.num_kv_heads) * static_cast<size_t>(config.head_dim);
  const size_t cache_elems = static_cast<size_t>(pr.num_blocks) * static_cast<size_t>(bs) * row;
  pr.k_cache.resize(cache_elems * elem);
  pr.v_cache.resize(cache_elems * elem);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 0; i < cache_elems; ++i) {
    store_from_float(config.type, pr.k_cache.data(), i, nan);
    store_from_float(config.type, pr.v_cache.data(), i, nan);
  }
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int32_t s = 0; s < num_seqs; ++s)
    for (int32_t j = 0; j < config.seq_lens[static_cast<size_t>(s)]; ++j) {
      const size_t slot =
        static_cast<size_t>(
          pr.block_tables[static_cast<size_t>(s * pr.max_blocks_per_seq + j / bs)]) *
          static_cast<size_t>(bs) +
        static_cast<size_t>(j % bs);
      for (size_t i = 0; i < row; ++i) {
        store_from_float(config.type, pr.k_cache.data(), slot * row + i, normal(rng));
        store_from_float(config.type, pr.v_cache.data(), slot * row + i, normal(rng));
      }
    }
  const size_t q_elems = static_cast<size_t>(pr.num_tokens) *
                         static_cast<size_t>(config.num_heads * config.head_dim + config.query_pad);
  pr.query.resize(q_elems * elem);
  // NOTE: queries scaled by 2 give peaked softmaxes, so the online rescaling
  // across blocks matters.
  for (size_t i = 0; i < q_elems; ++i)
    store_from_float(config.type, pr.query.data(), i, 2.0f * normal(rng));
  return pr;
}

std::vector<double> attention_problem::reference() const {
  const attention_config& c = config;
  const int32_t d = c.head_dim, bs = c.block_size, group = c.num_heads / c.num_kv_heads;
  const size_t q_stride = static_cast<size_t>(c.num_heads * d + c.query_pad);
  // NOTE: the same float scale the kernels get, applied in double.
  const double scale_f = static_cast<double>(1.0f / std::sqrt(static_cast<float>(d)));
  std::vector<double> out(static_cast<size_t>(num_tokens) * static_cast<size_t>(c.num_heads) *
                          static_cast<size_t>(d));
  for (int32_t t = 0; t < num_tokens; ++t) {
    int32_t seq = t, q_index = 0, q_len = 1;
    if (!query_start_loc.empty()) {
      seq =
        static_cast<int32_t>(std::upper_bound(query_start_loc.begin(), query_start_loc.end(), t) -
                             query_start_loc.begin()) -
        1;
      q_index = t - query_start_loc[static_cast<size_t>(seq)];
      q_len =
        query_start_loc[static_cast<size_t>(seq) + 1] - query_start_loc[static_cast<size_t>(seq)];
    }
    const int32_t num_keys = seq_lens[static_cast<size_t>(seq)] - q_len + q_index + 1;
    for (int32_t h = 0; h < c.num_heads; ++h) {
      const int32_t kvh = h / group;
      std::vector<double> logits(static_cast<size_t>(num_keys));
      std::vector<size_t> rows(static_cast<size_t>(num_keys));
      double max_logit = -INFINITY;
      for (int32_t j = 0; j < num_keys; ++j) {
        const size_t slot =
          static_cast<size_t>(
            block_tables[static_cast<size_t>(seq * max_blocks_per_seq + j / bs)]) *
            static_cast<size_t>(bs) +
          static_cast<size_t>(j % bs);
        rows[static_cast<size_t>(j)] =
          (slot * static_cast<size_t>(c.num_kv_heads) + static_cast<size_t>(kvh)) *
          static_cast<size_t>(d);
        double dot = 0.0;
        for (int32_t i = 0; i < d; ++i)
          dot += static_cast<double>(load_as_float(
                   c.type, query.data(),
                   static_cast<size_t>(t) * q_stride +
                     static_cast<size_t>(h) * static_cast<size_t>(d) + static_cast<size_t>(i))) *
                 static_cast<double>(load_as_float(
                   c.type, k_cache.data(), rows[static_cast<size_t>(j)] + static_cast<size_t>(i)));
        logits[static_cast<size_t>(j)] = dot * scale_f;
        max_logit = std::max(max_logit, logits[static_cast<size_t>(j)]);
      }
      double sum = 0.0;
      for (double& x : logits) sum += (x = std::exp(x - max_logit));
      double* o = out.data() + (static_cast<size_t>(t) * static_cast<size_t>(c.num_heads) +
                                static_cast<size_t>(h)) *
                                 static_cast<size_t>(d);
      for (int32_t j = 0; j < num_keys; ++j)
        for (int32_t i = 0; i < d; ++i)
          o[i] += logits[static_cast<size_t>(j)] / sum *
                  static_cast<double>(load_as_float(
                    c.type, v_cache.data(), rows[static_cast<size_t>(j)] + static_cast<size_t>(i)));
    }
  }
  return out;
}

std::vector<float> to_floats(dtype type, const void* data, size_t count) {
  std::vector<float> r(count);
  for (size_t i = 0; i < count; ++i) r[i] = load_as_float(type, data, i);
  return r;
}

tolerance attention_tolerance(dtype type) {
  // NOTE: outputs are rounded to the storage type: half has an 11-bit
  // significand (rel. 4.9e-4), bf16 an 8-bit one (rel. 3.9e-3).
  switch (type) {
  case dtype::f32: return {2e-5, 1e-4};
  case dtype::f16: return {2e-3, 4e-3};
  case dtype::bf16: return {1e-2, 1.6e-2};
  }
  return {0, 0};
}

} // namespace kvactor::kernels::testing
