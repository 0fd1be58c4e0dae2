#include "model/weights.hpp"

#include <algorithm>
#include <array>
#include <new>

#include "model/gguf/gguf_file.hpp"

namespace kvactor::model {
namespace {

// NOTE: 64 bytes: a cache line and the widest SIMD load; mmap'ed tensors are
// used in place only when they meet the element alignment.
constexpr std::size_t buffer_alignment = 64;

std::string shape_string(std::span<const int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// A layer's projection matrices (const or not, as the layer is).
template <class Layer>
auto projections(Layer& l) {
  return std::array{&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj,
                    &l.down_proj};
}

} // namespace

void model_weights::aligned_free::operator()(std::byte* p) const {
  ::operator delete[](p, std::align_val_t{buffer_alignment});
}

result<weight_view> model_weights::take(std::string_view name, std::vector<int64_t> expected,
                                        std::string_view meaning, dtype want) {
  auto t = files_.get(name);
  if (!t) return t.error();
  if (!std::equal(t->shape.begin(), t->shape.end(), expected.begin(), expected.end()))
    return tensor_error(*t->file, name,
                        "shape " + shape_string(t->shape) +
                          " disagrees with the config (expected " + shape_string(expected) + ": " +
                          std::string(meaning) + ")");
  return adopt(t->bytes.data(), t->type, expected, want);
}

weight_view model_weights::adopt(const std::byte* src, dtype stored, std::span<const int64_t> shape,
                                 dtype want) {
  weight_view v;
  v.type = want;
  v.rank = static_cast<int>(shape.size());
  v.dims[0] = shape[0];
  v.dims[1] = shape.size() == 2 ? shape[1] : 0;
  const auto n = static_cast<std::size_t>(v.num_elements());
  if (stored == want && reinterpret_cast<std::uintptr_t>(src) % dtype_size(want) == 0) {
    v.data = src;
    return v;
  }
  v.data = own(n * dtype_size(want));
  if (want == dtype::f32) {
    convert_to_f32(src, stored, {static_cast<float*>(const_cast<void*>(v.data)), n});
  } else {
    convert_to_bf16(src, stored, {static_cast<uint16_t*>(const_cast<void*>(v.data)), n});
  }
  return v;
}

std::byte* model_weights::own(std::size_t bytes) {
  buffer buf(static_cast<std::byte*>(
    ::operator new[](bytes == 0 ? 1 : bytes, std::align_val_t{buffer_alignment})));
  std::byte* p = buf.get();
  owned_.push_back({std::move(buf), bytes});
  return p;
}

std::size_t model_weights::num_owned_bytes() const {
  std::size_t n = 0;
  for (const owned_buffer& o : owned_) n += o.size;
  return n;
}

void model_weights::release_packed_matrices() {
  std::vector<weight_view*> matrices{&lm_head_};
  for (layer_weights& l : layers_)
    for (weight_view* v : projections(l)) matrices.push_back(v);
  for (weight_view* v : matrices) {
    if (v->data == embed_tokens_.data) continue; // tied
    const auto owner = std::find_if(owned_.begin(), owned_.end(), [&](const owned_buffer& o) {
      return o.bytes.get() == v->data;
    });
    if (owner != owned_.end()) owned_.erase(owner);
    v->data = nullptr;
  }
}

std::optional<quant_format> model_weights::quantized_format() const {
  for (const weight_view* v : {&embed_tokens_, &lm_head_})
    if (v->quant) return v->quant;
  for (const layer_weights& l : layers_)
    for (const weight_view* v : projections(l))
      if (v->quant) return v->quant;
  return std::nullopt;
}

void model_weights::drop_mapped_pages() const {
  files_.drop_pages();
  if (gguf_) gguf_->drop_pages();
}

result<model_weights> model_weights::load(const model_config& c, safetensors_set files,
                                          dtype matrix_dtype) {
  KVACTOR_ASSERT(matrix_dtype == dtype::f32 || matrix_dtype == dtype::bf16,
                 "matrix dtype must be f32 or bf16");
  model_weights w;
  w.files_ = std::move(files);
  w.matrix_dtype_ = matrix_dtype;
  const dtype mat = matrix_dtype;
  const dtype vec = dtype::f32;
  const int64_t hidden = c.hidden_size;

  // Layouts kvactor does not run must not load silently as if they were Llama.
  const std::string l0 = "model.layers.0.self_attn.";
  if (w.files_.contains(l0 + "o_proj.bias"))
    return error_in(w.files_.source(),
                      "tensor '" + l0 + "o_proj.bias': an output projection bias is not supported");
  for (const char* bias : {"q_proj.bias", "k_proj.bias", "v_proj.bias"})
    if (!c.has_qkv_bias() && w.files_.contains(l0 + bias)) {
      std::string what = "tensor '" + l0 + bias + "' present but config.json says ";
      what += architecture_name(c.arch);
      what += " (q/k/v biases are Qwen2's)";
      return error_in(w.files_.source(), what);
    }
  if (!c.has_qk_norm() && w.files_.contains(l0 + "q_norm.weight"))
    return error_in(
      w.files_.source(),
      "tensor '" + l0 +
        "q_norm.weight' present but config.json says llama (q/k norms are Qwen3's)");

  auto embed =
    w.take("model.embed_tokens.weight", {c.vocab_size, hidden}, "vocab_size, hidden_size", mat);
  if (!embed) return embed.error();
  w.embed_tokens_ = *embed;

  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    layer_weights lw;
    struct item {
      weight_view* out;
      std::string name;
      std::vector<int64_t> shape;
      const char* meaning;
      dtype type;
    };
    std::vector<item> items = {
      // clang-format off
      {&lw.input_layernorm, p + "input_layernorm.weight", {hidden}, "hidden_size", vec},
      {&lw.q_proj, p + "self_attn.q_proj.weight", {c.q_size(), hidden},
       "num_attention_heads * head_dim, hidden_size", mat},
      {&lw.k_proj, p + "self_attn.k_proj.weight", {c.kv_size(), hidden},
       "num_key_value_heads * head_dim, hidden_size", mat},
      {&lw.v_proj, p + "self_attn.v_proj.weight", {c.kv_size(), hidden},
       "num_key_value_heads * head_dim, hidden_size", mat},
      {&lw.o_proj, p + "self_attn.o_proj.weight", {hidden, c.q_size()},
       "hidden_size, num_attention_heads * head_dim", mat},
      {&lw.post_attention_layernorm, p + "post_attention_layernorm.weight", {hidden},
       "hidden_size", vec},
      {&lw.gate_proj, p + "mlp.gate_proj.weight", {c.intermediate_size, hidden},
       "intermediate_size, hidden_size", mat},
      {&lw.up_proj, p + "mlp.up_proj.weight", {c.intermediate_size, hidden},
       "intermediate_size, hidden_size", mat},
      {&lw.down_proj, p + "mlp.down_proj.weight", {hidden, c.intermediate_size},
       "hidden_size, intermediate_size", mat},
      // clang-format on
    };
    if (c.has_qkv_bias()) {
      items.push_back({&lw.q_bias.emplace(), p + "self_attn.q_proj.bias", {c.q_size()},
                       "num_attention_heads * head_dim", vec});
      items.push_back({&lw.k_bias.emplace(), p + "self_attn.k_proj.bias", {c.kv_size()},
                       "num_key_value_heads * head_dim", vec});
      items.push_back({&lw.v_bias.emplace(), p + "self_attn.v_proj.bias", {c.kv_size()},
                       "num_key_value_heads * head_dim", vec});
    }
    if (c.has_qk_norm()) {
      items.push_back(
        {&lw.q_norm.emplace(), p + "self_attn.q_norm.weight", {c.head_dim}, "head_dim", vec});
      items.push_back(
        {&lw.k_norm.emplace(), p + "self_attn.k_norm.weight", {c.head_dim}, "head_dim", vec});
    }
    for (auto& it : items) {
      auto v = w.take(it.name, it.shape, it.meaning, it.type);
      if (!v) return v.error();
      *it.out = *v;
    }
    w.layers_.push_back(lw);
  }

  auto norm = w.take("model.norm.weight", {hidden}, "hidden_size", vec);
  if (!norm) return norm.error();
  w.norm_ = *norm;

  if (c.tie_word_embeddings) {
    // NOTE: some tied checkpoints also store lm_head.weight; the tie wins, as
    // in transformers.
    w.lm_head_ = w.embed_tokens_;
  } else {
    auto head = w.take("lm_head.weight", {c.vocab_size, hidden}, "vocab_size, hidden_size", mat);
    if (!head) return head.error();
    w.lm_head_ = *head;
  }
  return w;
}

} // namespace kvactor::model
