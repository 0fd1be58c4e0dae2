#include "model/forward/device_forward.hpp"

#include <algorithm>
#include <cmath>

// Returns the status of `call` from the enclosing function when it failed.
#define KVACTOR_FORWARD_TRY(call)                   \
  do {                                              \
    if (const status kvactor_s_ = (call); !kvactor_s_) \
      return kvactor_s_;                            \
  } while (false)

namespace kvactor::model {
namespace {

// Device pointers into the step upload.
struct step_arrays {
  const int32_t* token_ids;       // [T]
  const int32_t* seq_lens;        // [S]
  const int32_t* query_start_loc; // [S + 1]
  const int32_t* sample_rows;     // [R]
  const int32_t* block_tables;    // [S, table_width]
  const int64_t* slot_mapping;    // [T]
  const float* rope_cos;               // [T, head_dim / 2]
  const float* rope_sin;               // [T, head_dim / 2]
};

step_arrays arrays(const std::byte* base, const batch_upload_layout& l) {
  return step_arrays{reinterpret_cast<const int32_t*>(base + l.token_ids),
                     reinterpret_cast<const int32_t*>(base + l.seq_lens),
                     reinterpret_cast<const int32_t*>(base + l.query_start_loc),
                     reinterpret_cast<const int32_t*>(base + l.sample_rows),
                     reinterpret_cast<const int32_t*>(base + l.block_tables),
                     reinterpret_cast<const int64_t*>(base + l.slot_mapping),
                     reinterpret_cast<const float*>(base + l.rope_cos),
                     reinterpret_cast<const float*>(base + l.rope_sin)};
}

class step {
public:
  step(forward_ops& ops, const model_config& c, const weight_plan& plan,
       const kernels::kv_cache_view& cache, const forward_batch& b, int32_t table_width,
       const step_arrays& a, const forward_buffers& buf)
    : ops_(ops),
      c_(c),
      plan_(plan),
      cache_(cache),
      b_(b),
      table_width_(table_width),
      a_(a),
      buf_(buf),
      t_(b.num_tokens()),
      h_(static_cast<int32_t>(c.hidden_size)),
      heads_(static_cast<int32_t>(c.num_attention_heads)),
      kv_heads_(static_cast<int32_t>(c.num_key_value_heads)),
      head_dim_(static_cast<int32_t>(c.head_dim)),
      qkv_stride_(c.q_size() + 2 * c.kv_size()),
      eps_(static_cast<float>(c.rms_norm_eps)) {}

  status run() {
    KVACTOR_FORWARD_TRY(ops_.embedding(buf_.weights + plan_.embed_tokens.offset,
                                       plan_.embed_tokens.type, a_.token_ids, t_, h_, buf_.hidden));
    for (std::size_t l = 0; l < plan_.layers.size(); ++l) {
      KVACTOR_FORWARD_TRY(attention(plan_.layers[l], static_cast<int32_t>(l)));
      KVACTOR_FORWARD_TRY(mlp(plan_.layers[l]));
    }
    return lm_head();
  }

private:
  // A product's input rows as its matrices take them: fp32 in place, or bf16.
  struct rows {
    const float* f32 = nullptr;
    const uint16_t* bf16 = nullptr;
    int64_t ld = 0;
  };

  const float* w(const weight_slot& s) const {
    KVACTOR_ASSERT(s.type == kernels::dtype::f32, "an fp32 weight");
    return reinterpret_cast<const float*>(buf_.weights + s.offset);
  }
  const uint16_t* w_bf16(const weight_slot& s) const {
    KVACTOR_ASSERT(s.type == kernels::dtype::bf16, "a bf16 weight");
    return reinterpret_cast<const uint16_t*>(buf_.weights + s.offset);
  }
  bool bf16_matrices() const { return plan_.matrices == kernels::dtype::bf16; }

  // x [m, k] rows ldx apart, prepared for the products: rounded to bf16
  // into x_bf16 with bf16 matrices (once for every product that reads it).
  status input(const float* x, int64_t ldx, int32_t m, int64_t k, rows& out) {
    if (!bf16_matrices()) {
      out = rows{x, nullptr, ldx};
      return {};
    }
    KVACTOR_FORWARD_TRY(ops_.round_to_bf16(x, ldx, m, static_cast<int32_t>(k), buf_.x_bf16, k));
    out = rows{nullptr, buf_.x_bf16, k};
    return {};
  }

  // RMSNorm of m rows of x [m, hidden] by `norm`, prepared for the
  // products: into f32_out (may be x), or with bf16 matrices rounded into
  // x_bf16 by the same launch.
  status normed_input(const float* x, int32_t m, const weight_slot& norm, float* f32_out,
                      rows& out) {
    if (!bf16_matrices()) {
      KVACTOR_FORWARD_TRY(ops_.rms_norm(x, h_, f32_out, h_, m, 1, h_, w(norm), eps_));
      out = rows{f32_out, nullptr, h_};
      return {};
    }
    KVACTOR_FORWARD_TRY(ops_.rms_norm_bf16(x, h_, buf_.x_bf16, h_, m, h_, w(norm), eps_));
    out = rows{nullptr, buf_.x_bf16, h_};
    return {};
  }

  // y = x W^T, or y += x W^T; x: [m, k]; W: [n, k]; y: [m, n] rows ldy apart
  status product(const rows& x, int32_t m, const weight_slot& s, int64_t n, int64_t k, float* y,
                 int64_t ldy, bool accumulate) {
    if (x.bf16 != nullptr)
      return ops_.linear_bf16(x.bf16, x.ld, m, w_bf16(s), n, k, y, ldy, accumulate);
    return ops_.linear(x.f32, x.ld, m, w(s), n, k, y, ldy, accumulate);
  }

  status attention(const layer_slots& lw, int32_t layer) {
    float* q = buf_.qkv;         // [T, heads, D], rows qkv_stride_ apart
    float* k = q + c_.q_size();  // [T, kv_heads, D]
    float* v = k + c_.kv_size(); // [T, kv_heads, D]
    rows normed;
    KVACTOR_FORWARD_TRY(normed_input(buf_.hidden, t_, lw.input_layernorm, buf_.normed, normed));
    // NOTE: q_proj, k_proj and v_proj lie back to back (weight_plan): one
    // product writes the whole fused row.
    KVACTOR_FORWARD_TRY(product(normed, t_, lw.q_proj, qkv_stride_, h_, q, qkv_stride_, false));
    if (lw.q_bias) // Qwen2: q|k|v biases lie back to back too
      KVACTOR_FORWARD_TRY(ops_.add_bias(q, qkv_stride_, t_, static_cast<int32_t>(qkv_stride_),
                                        w(*lw.q_bias)));
    if (lw.q_norm) {
      KVACTOR_FORWARD_TRY(
        ops_.rms_norm(q, qkv_stride_, q, qkv_stride_, t_, heads_, head_dim_, w(*lw.q_norm), eps_));
      KVACTOR_FORWARD_TRY(ops_.rms_norm(k, qkv_stride_, k, qkv_stride_, t_, kv_heads_, head_dim_,
                                        w(*lw.k_norm), eps_));
    }
    // NOTE: k's heads follow q's in the fused row: one launch rotates both.
    // A bf16 cache: q|k|v rounded to bf16 (nearest even) as the CPU pass
    // does, by the same launch.
    const kernels::dtype kv_type = cache_.shape.type;
    const bool bf16_cache = kv_type == kernels::dtype::bf16;
    if (bf16_cache)
      KVACTOR_FORWARD_TRY(ops_.rope_bf16(q, qkv_stride_, t_, heads_ + kv_heads_,
                                         heads_ + 2 * kv_heads_, head_dim_, a_.rope_cos,
                                         a_.rope_sin, buf_.qkv_bf16, qkv_stride_));
    else
      KVACTOR_FORWARD_TRY(
        ops_.rope(q, qkv_stride_, t_, heads_ + kv_heads_, head_dim_, a_.rope_cos, a_.rope_sin));
    const void* q_in = bf16_cache ? static_cast<const void*>(buf_.qkv_bf16) : q;
    const void* k_in = bf16_cache ? static_cast<const void*>(buf_.qkv_bf16 + c_.q_size()) : k;
    const void* v_in =
      bf16_cache ? static_cast<const void*>(buf_.qkv_bf16 + c_.q_size() + c_.kv_size()) : v;

    kernels::cache_write_params cw{};
    cw.key = k_in;   // [T, kv_heads, D], rows qkv_stride_ apart
    cw.value = v_in; // [T, kv_heads, D], rows qkv_stride_ apart
    cw.k_cache = cache_.k(layer);
    cw.v_cache = cache_.v(layer);
    cw.slot_mapping = a_.slot_mapping;
    cw.num_tokens = t_;
    cw.num_kv_heads = kv_heads_;
    cw.head_dim = head_dim_;
    cw.type = kv_type;
    cw.key_stride = qkv_stride_;
    cw.value_stride = qkv_stride_;
    KVACTOR_FORWARD_TRY(ops_.cache_write(cw));

    kernels::paged_attention_params pa{};
    pa.out = bf16_cache ? static_cast<void*>(buf_.attn_bf16) : buf_.attn; // [T, heads, D]
    // [T, heads, D], rows qkv_stride_ apart
    pa.query = q_in;
    pa.k_cache = cache_.k(layer);
    pa.v_cache = cache_.v(layer);
    pa.block_tables = a_.block_tables;
    pa.seq_lens = a_.seq_lens;
    pa.query_start_loc = b_.is_decode() ? nullptr : a_.query_start_loc;
    pa.num_seqs = b_.num_seqs();
    pa.num_tokens = t_;
    pa.num_heads = heads_;
    pa.num_kv_heads = kv_heads_;
    pa.head_dim = head_dim_;
    pa.block_size = b_.block_size;
    pa.max_blocks_per_seq = table_width_;
    pa.scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    pa.type = kv_type;
    pa.query_stride = qkv_stride_;
    KVACTOR_FORWARD_TRY(ops_.paged_attention(pa));

    // NOTE: bf16 attention output with bf16 matrices is o_proj's input as
    // it is (rounding its widened values would give the same bits).
    rows attn;
    if (bf16_cache && bf16_matrices()) {
      attn = rows{nullptr, buf_.attn_bf16, c_.q_size()};
    } else {
      if (bf16_cache)
        KVACTOR_FORWARD_TRY(ops_.widen_bf16(buf_.attn_bf16, buf_.attn, int64_t{t_} * c_.q_size()));
      KVACTOR_FORWARD_TRY(input(buf_.attn, c_.q_size(), t_, c_.q_size(), attn));
    }
    // NOTE: beta = 1 in the product adds the residual, as on the CPU.
    return product(attn, t_, lw.o_proj, h_, c_.q_size(), buf_.hidden, h_, true);
  }

  status mlp(const layer_slots& lw) {
    const int64_t inter = c_.intermediate_size;
    rows normed;
    KVACTOR_FORWARD_TRY(
      normed_input(buf_.hidden, t_, lw.post_attention_layernorm, buf_.normed, normed));
    KVACTOR_FORWARD_TRY(product(normed, t_, lw.gate_proj, inter, h_, buf_.gate, inter, false));
    KVACTOR_FORWARD_TRY(product(normed, t_, lw.up_proj, inter, h_, buf_.up, inter, false));
    rows gated;
    if (bf16_matrices()) {
      KVACTOR_FORWARD_TRY(ops_.swiglu_bf16(buf_.gate, buf_.up, buf_.x_bf16, int64_t{t_} * inter));
      gated = rows{nullptr, buf_.x_bf16, inter};
    } else {
      KVACTOR_FORWARD_TRY(ops_.swiglu(buf_.gate, buf_.up, buf_.gate, int64_t{t_} * inter));
      gated = rows{buf_.gate, nullptr, inter};
    }
    return product(gated, t_, lw.down_proj, h_, inter, buf_.hidden, h_, true);
  }

  status lm_head() {
    const int32_t n = b_.num_sample_rows();
    if (n == 0) return {};
    KVACTOR_FORWARD_TRY(ops_.gather_rows(buf_.hidden, a_.sample_rows, n, h_, buf_.last));
    rows last;
    KVACTOR_FORWARD_TRY(normed_input(buf_.last, n, plan_.norm, buf_.last, last));
    return product(last, n, plan_.lm_head, c_.vocab_size, h_, buf_.logits, c_.vocab_size, false);
  }

  forward_ops& ops_;
  const model_config& c_;
  const weight_plan& plan_;
  const kernels::kv_cache_view& cache_;
  const forward_batch& b_;
  const int32_t table_width_; // the uploaded tables' columns
  const step_arrays a_;
  const forward_buffers& buf_;
  const int32_t t_, h_, heads_, kv_heads_, head_dim_;
  const int64_t qkv_stride_;
  const float eps_;
};

} // namespace

int64_t bf16_input_width(const model_config& c) {
  return std::max({c.hidden_size, c.q_size(), c.intermediate_size});
}

status enqueue_forward(forward_ops& ops, const model_config& config, const weight_plan& plan,
                       const kernels::kv_cache_view& cache, const forward_batch& b,
                       const batch_upload_layout& layout, const forward_buffers& buffers) {
  KVACTOR_ASSERT(plan.layers.size() == static_cast<std::size_t>(config.num_hidden_layers),
                 "plan of another model");
  KVACTOR_ASSERT(plan.matrices == kernels::dtype::f32 || buffers.x_bf16 != nullptr,
                 "bf16 matrices without x_bf16");
  KVACTOR_ASSERT(cache.shape.type == kernels::dtype::f32 ||
                     (cache.shape.type == kernels::dtype::bf16 && buffers.qkv_bf16 != nullptr &&
                      buffers.attn_bf16 != nullptr),
                 "a KV cache of f32 or bf16, with its scratch");
  return step(ops, config, plan, cache, b, layout.table_width, arrays(buffers.upload, layout),
              buffers)
    .run();
}

} // namespace kvactor::model
