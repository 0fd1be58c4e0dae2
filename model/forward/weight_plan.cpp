#include "model/forward/weight_plan.hpp"

#include <algorithm>

#include "base/assert.hpp"
#include "model/dtype.hpp"

namespace kvactor::model {
namespace {

class planner {
public:
  explicit planner(dtype matrices) : matrices_(matrices) {}

  // A slot at the next aligned offset.
  weight_slot place(const weight_view& w) { return place_at(w, align_up(end_)); }
  // A slot right after the last one (fused matrices).
  weight_slot follow(const weight_view& w) { return place_at(w, end_); }
  std::size_t total() const { return align_up(end_); }

private:
  static std::size_t align_up(std::size_t n) {
    return (n + weight_plan::alignment - 1) / weight_plan::alignment * weight_plan::alignment;
  }

  weight_slot place_at(const weight_view& w, std::size_t offset) {
    weight_slot s;
    s.source = w;
    s.type = w.rank == 2 ? matrices_ : dtype::f32; // norm weights (rank 1) stay fp32
    s.offset = offset;
    s.bytes = static_cast<std::size_t>(w.num_elements()) * dtype_size(s.type);
    end_ = offset + s.bytes;
    return s;
  }

  dtype matrices_;
  std::size_t end_ = 0;
};

} // namespace

weight_plan weight_plan::make(const model_weights& weights, dtype matrices) {
  KVACTOR_ASSERT(matrices == dtype::f32 || matrices == dtype::bf16,
                 "device matrices are f32 or bf16");
  weight_plan p;
  p.matrices = matrices;
  planner at(matrices);
  p.embed_tokens = at.place(weights.embed_tokens());
  for (const layer_weights& w : weights.layers()) {
    KVACTOR_ASSERT(w.q_proj.cols() == w.k_proj.cols() && w.k_proj.cols() == w.v_proj.cols(),
                   "q, k and v projections of different widths");
    layer_slots l;
    l.input_layernorm = at.place(w.input_layernorm);
    l.q_proj = at.place(w.q_proj);
    l.k_proj = at.follow(w.k_proj);
    l.v_proj = at.follow(w.v_proj);
    if (w.q_bias) {
      l.q_bias = at.place(*w.q_bias);
      l.k_bias = at.follow(*w.k_bias);
      l.v_bias = at.follow(*w.v_bias);
    }
    if (w.q_norm) l.q_norm = at.place(*w.q_norm);
    if (w.k_norm) l.k_norm = at.place(*w.k_norm);
    l.o_proj = at.place(w.o_proj);
    l.post_attention_layernorm = at.place(w.post_attention_layernorm);
    l.gate_proj = at.place(w.gate_proj);
    l.up_proj = at.place(w.up_proj);
    l.down_proj = at.place(w.down_proj);
    p.layers.push_back(l);
  }
  p.norm = at.place(weights.norm());
  // NOTE: tied embeddings are one tensor in memory (weights.hpp): one slot.
  p.lm_head = weights.lm_head().data == weights.embed_tokens().data ? p.embed_tokens
                                                                    : at.place(weights.lm_head());
  p.total_bytes = at.total();
  return p;
}

std::vector<weight_slot> weight_plan::uploads() const {
  std::vector<weight_slot> all{embed_tokens};
  for (const layer_slots& l : layers) {
    for (const weight_slot* s : {&l.input_layernorm, &l.q_proj, &l.k_proj, &l.v_proj})
      all.push_back(*s);
    for (const auto* b : {&l.q_bias, &l.k_bias, &l.v_bias})
      if (*b) all.push_back(**b);
    if (l.q_norm) all.push_back(*l.q_norm);
    if (l.k_norm) all.push_back(*l.k_norm);
    for (const weight_slot* s :
         {&l.o_proj, &l.post_attention_layernorm, &l.gate_proj, &l.up_proj, &l.down_proj})
      all.push_back(*s);
  }
  all.push_back(norm);
  if (lm_head.offset != embed_tokens.offset) all.push_back(lm_head);
  std::sort(all.begin(), all.end(),
            [](const weight_slot& a, const weight_slot& b) { return a.offset < b.offset; });
  return all;
}

void widen_to_f32(const weight_view& w, int64_t first, std::span<float> out) {
  KVACTOR_ASSERT(first >= 0 && first + static_cast<int64_t>(out.size()) <= w.num_elements(),
                 "elements outside the weight");
  const auto* src =
    static_cast<const std::byte*>(w.data) + static_cast<std::size_t>(first) * dtype_size(w.type);
  convert_to_f32(src, w.type, out);
}

void device_image(const weight_slot& s, int64_t first, std::span<std::byte> out) {
  const std::size_t size = dtype_size(s.type);
  KVACTOR_ASSERT(out.size() % size == 0, "a partial element");
  const auto num = static_cast<int64_t>(out.size() / size);
  KVACTOR_ASSERT(first >= 0 && first + num <= s.num_elements(), "elements outside the weight");
  const auto* src = static_cast<const std::byte*>(s.source.data) +
                    static_cast<std::size_t>(first) * dtype_size(s.source.type);
  const auto n = static_cast<std::size_t>(num);
  if (s.type == dtype::f32)
    convert_to_f32(src, s.source.type, std::span<float>(reinterpret_cast<float*>(out.data()), n));
  else
    convert_to_bf16(src, s.source.type,
                    std::span<uint16_t>(reinterpret_cast<uint16_t*>(out.data()), n));
}

} // namespace kvactor::model
