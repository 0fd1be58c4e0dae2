#include "model/forward/device_forward.hpp"

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
  const std::int32_t* token_ids;       // [T]
  const std::int32_t* seq_lens;        // [S]
  const std::int32_t* query_start_loc; // [S + 1]
  const std::int32_t* sample_rows;     // [R]
  const std::int32_t* block_tables;    // [S, max_blocks_per_seq]
  const std::int64_t* slot_mapping;    // [T]
  const float* rope_cos;               // [T, head_dim / 2]
  const float* rope_sin;               // [T, head_dim / 2]
};

step_arrays arrays(const std::byte* base, const batch_upload_layout& l) {
  return step_arrays{reinterpret_cast<const std::int32_t*>(base + l.token_ids),
                     reinterpret_cast<const std::int32_t*>(base + l.seq_lens),
                     reinterpret_cast<const std::int32_t*>(base + l.query_start_loc),
                     reinterpret_cast<const std::int32_t*>(base + l.sample_rows),
                     reinterpret_cast<const std::int32_t*>(base + l.block_tables),
                     reinterpret_cast<const std::int64_t*>(base + l.slot_mapping),
                     reinterpret_cast<const float*>(base + l.rope_cos),
                     reinterpret_cast<const float*>(base + l.rope_sin)};
}

class step {
public:
  step(forward_ops& ops, const model_config& c, const weight_plan& plan, const kernels::kv_cache_view& cache,
       const forward_batch& b, const step_arrays& a, const forward_buffers& buf)
      : ops_(ops), c_(c), plan_(plan), cache_(cache), b_(b), a_(a), buf_(buf), t_(b.num_tokens()),
        h_(static_cast<std::int32_t>(c.hidden_size)), heads_(static_cast<std::int32_t>(c.num_attention_heads)),
        kv_heads_(static_cast<std::int32_t>(c.num_key_value_heads)), head_dim_(static_cast<std::int32_t>(c.head_dim)),
        qkv_stride_(c.q_size() + 2 * c.kv_size()), eps_(static_cast<float>(c.rms_norm_eps)) {}

  status run() {
    KVACTOR_FORWARD_TRY(ops_.embedding(w(plan_.embed_tokens), a_.token_ids, t_, h_, buf_.hidden));
    for (std::size_t l = 0; l < plan_.layers.size(); ++l) {
      KVACTOR_FORWARD_TRY(attention(plan_.layers[l], static_cast<std::int32_t>(l)));
      KVACTOR_FORWARD_TRY(mlp(plan_.layers[l]));
    }
    return lm_head();
  }

private:
  const float* w(const weight_slot& s) const { return reinterpret_cast<const float*>(buf_.weights + s.offset); }

  status attention(const layer_slots& lw, std::int32_t layer) {
    float* q = buf_.qkv;         // [T, heads, D], rows qkv_stride_ apart
    float* k = q + c_.q_size();  // [T, kv_heads, D]
    float* v = k + c_.kv_size(); // [T, kv_heads, D]
    KVACTOR_FORWARD_TRY(ops_.rms_norm(buf_.hidden, h_, buf_.normed, h_, t_, 1, h_, w(lw.input_layernorm), eps_));
    // NOTE: q_proj, k_proj and v_proj lie back to back (weight_plan): one
    // product writes the whole fused row.
    KVACTOR_FORWARD_TRY(ops_.linear(buf_.normed, h_, t_, w(lw.q_proj), qkv_stride_, h_, q, qkv_stride_, false));
    if (lw.q_norm) {
      KVACTOR_FORWARD_TRY(ops_.rms_norm(q, qkv_stride_, q, qkv_stride_, t_, heads_, head_dim_, w(*lw.q_norm), eps_));
      KVACTOR_FORWARD_TRY(
          ops_.rms_norm(k, qkv_stride_, k, qkv_stride_, t_, kv_heads_, head_dim_, w(*lw.k_norm), eps_));
    }
    KVACTOR_FORWARD_TRY(ops_.rope(q, qkv_stride_, t_, heads_, head_dim_, a_.rope_cos, a_.rope_sin));
    KVACTOR_FORWARD_TRY(ops_.rope(k, qkv_stride_, t_, kv_heads_, head_dim_, a_.rope_cos, a_.rope_sin));

    kernels::cache_write_params cw{};
    cw.key = k;   // [T, kv_heads, D], rows qkv_stride_ apart
    cw.value = v; // [T, kv_heads, D], rows qkv_stride_ apart
    cw.k_cache = cache_.k(layer);
    cw.v_cache = cache_.v(layer);
    cw.slot_mapping = a_.slot_mapping;
    cw.num_tokens = t_;
    cw.num_kv_heads = kv_heads_;
    cw.head_dim = head_dim_;
    cw.type = kernels::dtype::f32;
    cw.key_stride = qkv_stride_;
    cw.value_stride = qkv_stride_;
    KVACTOR_FORWARD_TRY(ops_.cache_write(cw));

    kernels::paged_attention_params pa{};
    pa.out = buf_.attn; // [T, heads, D]
    pa.query = q;       // [T, heads, D], rows qkv_stride_ apart
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
    pa.max_blocks_per_seq = b_.max_blocks_per_seq;
    pa.scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    pa.type = kernels::dtype::f32;
    pa.query_stride = qkv_stride_;
    KVACTOR_FORWARD_TRY(ops_.paged_attention(pa));

    // NOTE: beta = 1 in the product adds the residual, as on the CPU.
    return ops_.linear(buf_.attn, c_.q_size(), t_, w(lw.o_proj), h_, c_.q_size(), buf_.hidden, h_, true);
  }

  status mlp(const layer_slots& lw) {
    const std::int64_t inter = c_.intermediate_size;
    KVACTOR_FORWARD_TRY(
        ops_.rms_norm(buf_.hidden, h_, buf_.normed, h_, t_, 1, h_, w(lw.post_attention_layernorm), eps_));
    KVACTOR_FORWARD_TRY(ops_.linear(buf_.normed, h_, t_, w(lw.gate_proj), inter, h_, buf_.gate, inter, false));
    KVACTOR_FORWARD_TRY(ops_.linear(buf_.normed, h_, t_, w(lw.up_proj), inter, h_, buf_.up, inter, false));
    KVACTOR_FORWARD_TRY(ops_.swiglu(buf_.gate, buf_.up, buf_.gate, std::int64_t{t_} * inter));
    return ops_.linear(buf_.gate, inter, t_, w(lw.down_proj), h_, inter, buf_.hidden, h_, true);
  }

  status lm_head() {
    const std::int32_t n = b_.num_sample_rows();
    if (n == 0) return {};
    KVACTOR_FORWARD_TRY(ops_.gather_rows(buf_.hidden, a_.sample_rows, n, h_, buf_.last));
    KVACTOR_FORWARD_TRY(ops_.rms_norm(buf_.last, h_, buf_.last, h_, n, 1, h_, w(plan_.norm), eps_));
    return ops_.linear(buf_.last, h_, n, w(plan_.lm_head), c_.vocab_size, h_, buf_.logits, c_.vocab_size, false);
  }

  forward_ops& ops_;
  const model_config& c_;
  const weight_plan& plan_;
  const kernels::kv_cache_view& cache_;
  const forward_batch& b_;
  const step_arrays a_;
  const forward_buffers& buf_;
  const std::int32_t t_, h_, heads_, kv_heads_, head_dim_;
  const std::int64_t qkv_stride_;
  const float eps_;
};

} // namespace

status enqueue_forward(forward_ops& ops, const model_config& config, const weight_plan& plan,
                       const kernels::kv_cache_view& cache, const forward_batch& b, const batch_upload_layout& layout,
                       const forward_buffers& buffers) {
  KVACTOR_ASSERT(plan.layers.size() == static_cast<std::size_t>(config.num_hidden_layers), "plan of another model");
  return step(ops, config, plan, cache, b, arrays(buffers.upload, layout), buffers).run();
}

} // namespace kvactor::model
