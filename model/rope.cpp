#include "model/rope.hpp"

#include <cmath>
#include <numbers>

namespace kvactor::model {

std::vector<double> rope_inv_freq(const model_config& c) {
  KVACTOR_ASSERT(c.head_dim > 0 && c.head_dim % 2 == 0,
                 "head_dim must be even (validated by parse_config)");
  const auto half = static_cast<std::size_t>(c.head_dim / 2);
  std::vector<double> f(half);
  for (std::size_t i = 0; i < half; ++i)
    f[i] =
      1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
  const auto& rs = c.rope_scaling;
  switch (rs.type) {
    case rope_scaling::kind::none: break;
    case rope_scaling::kind::linear:
      for (auto& x : f) x /= rs.factor;
      break;
    case rope_scaling::kind::llama3: {
      const double old_len = static_cast<double>(rs.original_max_position_embeddings);
      const double low_freq_wavelen = old_len / rs.low_freq_factor;
      const double high_freq_wavelen = old_len / rs.high_freq_factor;
      for (auto& x : f) {
        const double wavelen = 2 * std::numbers::pi / x;
        if (wavelen < high_freq_wavelen) continue; // high frequencies stay
        if (wavelen > low_freq_wavelen) {
          x /= rs.factor; // low frequencies scale fully
        } else {
          const double smooth =
            (old_len / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
          x = (1 - smooth) * x / rs.factor + smooth * x;
        }
      }
      break;
    }
  }
  if (!rs.frequency_divisors.empty()) {
    KVACTOR_ASSERT(rs.frequency_divisors.size() == half,
                   "one frequency divisor per dimension pair (validated by the GGUF reader)");
    for (std::size_t i = 0; i < half; ++i) f[i] /= rs.frequency_divisors[i];
  }
  return f;
}

} // namespace kvactor::model
