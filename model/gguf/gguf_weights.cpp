// model_weights::load_gguf: the tensors of a Llama / Qwen2 / Qwen3 GGUF file
// under its names, mapped onto the layout model_weights gives.
//
//   token_embd.weight          model.embed_tokens.weight
//   blk.N.attn_norm.weight     model.layers.N.input_layernorm.weight
//   blk.N.attn_{q,k,v}.weight  ....self_attn.{q,k,v}_proj.weight (and .bias: Qwen2)
//   blk.N.attn_{q,k}_norm.weight  ....self_attn.{q,k}_norm.weight (Qwen3)
//   blk.N.attn_output.weight   ....self_attn.o_proj.weight
//   blk.N.ffn_norm.weight      ....post_attention_layernorm.weight
//   blk.N.ffn_{gate,up,down}.weight  ....mlp.{gate,up,down}_proj.weight
//   output_norm.weight         model.norm.weight
//   output.weight              lm_head.weight (absent when tied)
//
// GGUF lists a matrix's dims fastest first: [rows, cols] is {cols, rows}.
#include <cstring>
#include <string>

#include "model/gguf/gguf_file.hpp"
#include "model/gguf/gguf_types.hpp"
#include "model/quant/quant_format.hpp"
#include "model/weights.hpp"

namespace kvactor::model {
namespace {

std::optional<dtype> dense_type(ggml_type t) {
  switch (t) {
  case ggml_type::f32: return dtype::f32;
  case ggml_type::f16: return dtype::f16;
  case ggml_type::bf16: return dtype::bf16;
  default: return std::nullopt;
  }
}

// "F32, F16, BF16, Q8_0, ... IQ4_XS": the matrix types kvactor computes with.
std::string matrix_type_names() {
  std::string out = "F32, F16, BF16";
  for (quant_format f : all_quant_formats()) (out += ", ") += ggml_type_name(ggml_type_of(f));
  return out;
}

std::string dims_string(std::span<const int64_t> shape) {
  std::string s = "{";
  for (std::size_t i = shape.size(); i-- > 0;) {
    s += std::to_string(shape[i]);
    if (i) s += ", ";
  }
  return s + "}";
}

} // namespace

result<model_weights> model_weights::load_gguf(const model_config& c,
                                               std::shared_ptr<const gguf_file> file,
                                               dtype matrix_dtype) {
  KVACTOR_ASSERT(matrix_dtype == dtype::f32 || matrix_dtype == dtype::bf16,
                 "matrix dtype must be f32 or bf16");
  model_weights w;
  w.gguf_ = file;
  w.matrix_dtype_ = matrix_dtype;
  const gguf_file& f = *file;
  const auto fail = [&](std::string_view name, const std::string& what) {
    return tensor_error(f.path(), name, what);
  };

  // One tensor of `shape` ([rows, cols] or [n]); a matrix in matrix_dtype
  // or its block format, a vector in fp32. `head_rows` > 0: Llama's q or k,
  // whose rows llama.cpp's converter reorders head by head for its RoPE
  // (each head's two halves interleaved); they come back in the order of
  // Hugging Face's rotate-half RoPE.
  const auto tensor = [&](const std::string& name, std::vector<int64_t> shape,
                          int64_t head_rows = 0) -> result<weight_view> {
    const gguf_tensor_info* t = f.find(name);
    if (t == nullptr) return fail(name, "missing");
    bool same = t->dims.size() == shape.size();
    for (std::size_t i = 0; same && i < shape.size(); ++i)
      same = t->dims[i] == static_cast<uint64_t>(shape[shape.size() - 1 - i]);
    if (!same) {
      std::vector<int64_t> got(t->dims.rbegin(), t->dims.rend());
      return fail(name, "dims " + dims_string(got) + " disagree with the metadata (expected " +
                          dims_string(shape) + ")");
    }
    const std::byte* src = f.data(*t);
    weight_view v;
    if (const std::optional<dtype> stored = dense_type(t->type)) {
      v = w.adopt(src, *stored, shape, shape.size() == 2 ? matrix_dtype : dtype::f32);
    } else if (const std::optional<quant_format> q = quant_format_of(t->type);
               q && shape.size() == 2) {
      v = weight_view{src, matrix_dtype, 2, {shape[0], shape[1]}, q};
    } else {
      std::string what = "type ";
      what += ggml_type_name(t->type);
      what += shape.size() == 2 ? " is not one kvactor computes with (" + matrix_type_names() + ")"
                                : std::string(" for a vector (F32, F16 or BF16)");
      return fail(name, what);
    }
    if (head_rows <= 0) return v;
    // NOTE: whole rows move, so blocks move with their row, and the copy is
    // owned (the mapping is read-only).
    const std::size_t row = v.quant ? quant_row_bytes(*v.quant, v.cols())
                                    : static_cast<std::size_t>(v.cols()) * dtype_size(v.type);
    std::byte* out = w.own(row * static_cast<std::size_t>(v.rows()));
    const auto* in = static_cast<const std::byte*>(v.data);
    const int64_t half = head_rows / 2;
    for (int64_t r = 0; r < v.rows(); ++r) {
      const int64_t head = r / head_rows, i = r % head_rows; // HF row i of the head
      const int64_t from = head * head_rows + (i % half) * 2 + i / half;
      std::memcpy(out + static_cast<std::size_t>(r) * row,
                  in + static_cast<std::size_t>(from) * row, row);
    }
    v.data = out;
    return v;
  };

  const int64_t hidden = c.hidden_size;
  auto embed = tensor("token_embd.weight", {c.vocab_size, hidden});
  if (!embed) return embed.error();
  w.embed_tokens_ = *embed;
  const int64_t qk_head = c.arch == architecture::llama ? c.head_dim : 0;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    layer_weights lw;
    struct item {
      weight_view* out;
      const char* name;
      std::vector<int64_t> shape;
      int64_t head_rows = 0;
    };
    std::vector<item> items = {
      {&lw.input_layernorm, "attn_norm.weight", {hidden}},
      {&lw.q_proj, "attn_q.weight", {c.q_size(), hidden}, qk_head},
      {&lw.k_proj, "attn_k.weight", {c.kv_size(), hidden}, qk_head},
      {&lw.v_proj, "attn_v.weight", {c.kv_size(), hidden}},
      {&lw.o_proj, "attn_output.weight", {hidden, c.q_size()}},
      {&lw.post_attention_layernorm, "ffn_norm.weight", {hidden}},
      {&lw.gate_proj, "ffn_gate.weight", {c.intermediate_size, hidden}},
      {&lw.up_proj, "ffn_up.weight", {c.intermediate_size, hidden}},
      {&lw.down_proj, "ffn_down.weight", {hidden, c.intermediate_size}},
    };
    if (c.has_qkv_bias()) {
      items.push_back({&lw.q_bias.emplace(), "attn_q.bias", {c.q_size()}});
      items.push_back({&lw.k_bias.emplace(), "attn_k.bias", {c.kv_size()}});
      items.push_back({&lw.v_bias.emplace(), "attn_v.bias", {c.kv_size()}});
    }
    if (c.has_qk_norm()) {
      items.push_back({&lw.q_norm.emplace(), "attn_q_norm.weight", {c.head_dim}});
      items.push_back({&lw.k_norm.emplace(), "attn_k_norm.weight", {c.head_dim}});
    }
    for (const item& it : items) {
      auto v = tensor(p + it.name, it.shape, it.head_rows);
      if (!v) return v.error();
      *it.out = *v;
    }
    // NOTE: q | k | v and gate | up are multiplied as one stacked matrix:
    // all quantised (in any formats) or all of one dense type.
    for (const auto& [a, b, names] :
         {std::tuple{&lw.q_proj, &lw.k_proj, "attn_q, attn_k"},
          std::tuple{&lw.q_proj, &lw.v_proj, "attn_q, attn_v"},
          std::tuple{&lw.gate_proj, &lw.up_proj, "ffn_gate, ffn_up"}})
      if (a->quant.has_value() != b->quant.has_value() || (!a->quant && a->type != b->type))
        return fail(p + names, "these matrices are multiplied together: all quantised or all of "
                               "one dense type");
    w.layers_.push_back(lw);
  }
  auto norm = tensor("output_norm.weight", {hidden});
  if (!norm) return norm.error();
  w.norm_ = *norm;
  if (c.tie_word_embeddings) {
    w.lm_head_ = w.embed_tokens_;
  } else {
    auto head = tensor("output.weight", {c.vocab_size, hidden});
    if (!head) return head.error();
    w.lm_head_ = *head;
  }
  return w;
}

} // namespace kvactor::model
