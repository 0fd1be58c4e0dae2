#pragma once
// A dense reference forward pass for the paged-vs-dense tests, written
// plainly: one token at a time, contiguous per-sequence K/V, double
// precision throughout, straight from the Hugging Face definitions.

#include <cmath>
#include <vector>

#include "model/config.hpp"
#include "model/rope.hpp"
#include "model/weights.hpp"

namespace kvactor::model::test_support {

class dense_reference {
public:
  dense_reference(const model_config& c, const model_weights& w)
      : c_(c), w_(w), inv_freq_(rope_inv_freq(c)), k_(static_cast<size_t>(c.num_hidden_layers)),
        v_(static_cast<size_t>(c.num_hidden_layers)) {}

  // Appends `token` at the next position; returns its logits [vocab].
  std::vector<double> push(int32_t token) {
    const int64_t hs = c_.hidden_size, d = c_.head_dim, nh = c_.num_attention_heads,
                  nkv = c_.num_key_value_heads;
    const int64_t pos = num_tokens_++;
    std::vector<double> x = row(w_.embed_tokens(), token);
    for (int64_t l = 0; l < c_.num_hidden_layers; ++l) {
      const layer_weights& lw = w_.layers()[size_t(l)];
      std::vector<double> xn = rms(x, lw.input_layernorm.f32());
      std::vector<double> q = matvec(lw.q_proj, xn), k = matvec(lw.k_proj, xn),
                          v = matvec(lw.v_proj, xn);
      if (c_.has_qkv_bias()) {
        add(q, *lw.q_bias);
        add(k, *lw.k_bias);
        add(v, *lw.v_bias);
      }
      if (c_.has_qk_norm()) {
        for (int64_t h = 0; h < nh; ++h) rms_head(q.data() + h * d, lw.q_norm->f32());
        for (int64_t h = 0; h < nkv; ++h) rms_head(k.data() + h * d, lw.k_norm->f32());
      }
      for (int64_t h = 0; h < nh; ++h) rope(q.data() + h * d, pos);
      for (int64_t h = 0; h < nkv; ++h) rope(k.data() + h * d, pos);
      k_[size_t(l)].push_back(k);
      v_[size_t(l)].push_back(v);
      std::vector<double> attn(size_t(nh * d), 0.0);
      for (int64_t h = 0; h < nh; ++h) {
        const int64_t kvh = h / (nh / nkv);
        std::vector<double> s(size_t(pos + 1));
        double mx = -1e300;
        for (int64_t j = 0; j <= pos; ++j) {
          double dot = 0;
          for (int64_t i = 0; i < d; ++i)
            dot += q[size_t(h * d + i)] * k_[size_t(l)][size_t(j)][size_t(kvh * d + i)];
          s[size_t(j)] = dot / std::sqrt(double(d));
          mx = std::max(mx, s[size_t(j)]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= pos; ++j)
          for (int64_t i = 0; i < d; ++i)
            attn[size_t(h * d + i)] +=
              s[size_t(j)] / sum * v_[size_t(l)][size_t(j)][size_t(kvh * d + i)];
      }
      std::vector<double> o = matvec(lw.o_proj, attn);
      for (int64_t i = 0; i < hs; ++i) x[size_t(i)] += o[size_t(i)];
      xn = rms(x, lw.post_attention_layernorm.f32());
      std::vector<double> g = matvec(lw.gate_proj, xn), u = matvec(lw.up_proj, xn);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      std::vector<double> dn = matvec(lw.down_proj, g);
      for (int64_t i = 0; i < hs; ++i) x[size_t(i)] += dn[size_t(i)];
    }
    last_ = matvec(w_.lm_head(), rms(x, w_.norm().f32()));
    return last_;
  }

  int64_t num_tokens() const { return num_tokens_; }
  // Logits of the last token pushed.
  const std::vector<double>& last() const { return last_; }

private:
  std::vector<double> row(const weight_view& m, int64_t r) const {
    std::vector<double> out(size_t(m.cols()));
    for (int64_t i = 0; i < m.cols(); ++i) out[size_t(i)] = m.f32()[r * m.cols() + i];
    return out;
  }
  std::vector<double> matvec(const weight_view& m, const std::vector<double>& x) const {
    std::vector<double> y(size_t(m.rows()));
    for (int64_t r = 0; r < m.rows(); ++r) {
      double s = 0;
      for (int64_t i = 0; i < m.cols(); ++i) s += double(m.f32()[r * m.cols() + i]) * x[size_t(i)];
      y[size_t(r)] = s;
    }
    return y;
  }
  static void add(std::vector<double>& x, const weight_view& bias) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += double(bias.f32()[i]);
  }
  std::vector<double> rms(const std::vector<double>& x, const float* w) const {
    double ss = 0;
    for (double e : x) ss += e * e;
    const double inv = 1 / std::sqrt(ss / double(x.size()) + c_.rms_norm_eps);
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = double(w[i]) * x[i] * inv;
    return out;
  }
  void rms_head(double* x, const float* w) const {
    double ss = 0;
    for (int64_t i = 0; i < c_.head_dim; ++i) ss += x[i] * x[i];
    const double inv = 1 / std::sqrt(ss / double(c_.head_dim) + c_.rms_norm_eps);
    for (int64_t i = 0; i < c_.head_dim; ++i) x[i] = double(w[i]) * x[i] * inv;
  }
  // Rotate-half: pairs (i, i + D/2).
  void rope(double* x, int64_t pos) const {
    const int64_t half = c_.head_dim / 2;
    for (int64_t i = 0; i < half; ++i) {
      const double a = double(pos) * inv_freq_[size_t(i)], c = std::cos(a), s = std::sin(a);
      const double x1 = x[i], x2 = x[i + half];
      x[i] = x1 * c - x2 * s;
      x[i + half] = x2 * c + x1 * s;
    }
  }

  const model_config& c_;
  const model_weights& w_;
  std::vector<double> inv_freq_;
  std::vector<std::vector<std::vector<double>>> k_, v_; // [layer][pos][kv_heads * D]
  int64_t num_tokens_ = 0;
  std::vector<double> last_;
};

} // namespace kvactor::model::test_support
