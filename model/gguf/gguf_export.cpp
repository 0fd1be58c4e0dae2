#include "model/gguf/gguf_export.hpp"

#include <algorithm>
#include <cstring>
#include <variant>
#include <vector>

#include "model/rope.hpp"

namespace kvactor::model {
namespace {

std::vector<float> values_of(const weight_view& v) {
  std::vector<float> out(static_cast<std::size_t>(v.num_elements()));
  for (int64_t r = 0; r < v.rows(); ++r) {
    float* row = out.data() + r * v.cols();
    if (v.quant)
      dequantize_row(*v.quant, v.blocks() + r * quant_row_bytes(*v.quant, v.cols()), v.cols(),
                     row);
    else
      for (int64_t c = 0; c < v.cols(); ++c)
        row[c] = v.type == dtype::f32 ? v.f32()[r * v.cols() + c]
                                      : bf16_to_f32(v.bf16()[r * v.cols() + c]);
  }
  return out;
}

// llama.cpp's converter's order of a Llama q or k matrix: within each head
// of `head_rows` rows, row 2 j + h is Hugging Face's row h * head_rows / 2 + j.
std::vector<float> interleave_halves(const std::vector<float>& v, int64_t rows, int64_t cols,
                                     int64_t head_rows) {
  std::vector<float> out(v.size());
  const int64_t half = head_rows / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t head = r / head_rows, i = r % head_rows;
    const int64_t from = head * head_rows + (i % 2) * half + i / 2;
    std::memcpy(out.data() + r * cols, v.data() + from * cols,
                static_cast<std::size_t>(cols) * sizeof(float));
  }
  return out;
}

// RoPE scaling as llama.cpp's converter writes it: linear as keys; llama3
// (and divisors read from a GGUF file) as each frequency's divisor in
// rope_freqs.weight, fp32.
void add_rope_scaling(const model_config& c, gguf_writer& w) {
  const struct rope_scaling& rs = c.rope_scaling;
  const std::string p = std::string(architecture_name(c.arch)) + ".";
  if (rs.type == rope_scaling::kind::linear) {
    w.add_string(p + "rope.scaling.type", "linear");
    w.add_f32(p + "rope.scaling.factor", static_cast<float>(rs.factor));
  }
  if (rs.type != rope_scaling::kind::llama3 && rs.frequency_divisors.empty()) return;
  model_config unscaled = c;
  unscaled.rope_scaling.frequency_divisors.clear();
  if (rs.type == rope_scaling::kind::llama3) unscaled.rope_scaling.type = rope_scaling::kind::none;
  const std::vector<double> from = rope_inv_freq(unscaled), to = rope_inv_freq(c);
  std::vector<float> divisors(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) divisors[i] = static_cast<float>(from[i] / to[i]);
  w.add_tensor("rope_freqs.weight", {divisors.size()}, ggml_type::f32,
               std::as_bytes(std::span(divisors)));
}

} // namespace

status add_gguf_tokenizer(const tokenizer_spec& spec, const model_config& c, gguf_writer& w) {
  if (!spec.bpe.byte_level || spec.splits.size() != 1 ||
      !std::holds_alternative<split_pattern>(spec.splits.front()))
    return error_in("GGUF tokenizer", "only byte-level BPE with one known split pattern is "
                                        "written (GGUF's gpt2 model)");
  const char* pre = nullptr;
  switch (std::get<split_pattern>(spec.splits.front())) {
  case split_pattern::llama3: pre = "llama-bpe"; break;
  case split_pattern::qwen2: pre = "qwen2"; break; // NOTE: its reader adds Qwen's NFC
  case split_pattern::gpt2: pre = "gpt-2"; break;
  default: return error_in("GGUF tokenizer", "no GGUF pre-tokenizer name for its split");
  }
  std::size_t n = 0;
  for (const auto& [symbol, id] : spec.vocab) n = std::max(n, static_cast<std::size_t>(id) + 1);
  for (const added_token& a : spec.added_tokens)
    n = std::max(n, static_cast<std::size_t>(a.id) + 1);
  std::vector<std::string> tokens(n);
  std::vector<int32_t> types(n, 1); // normal
  for (const auto& [symbol, id] : spec.vocab) tokens[static_cast<std::size_t>(id)] = symbol;
  for (const added_token& a : spec.added_tokens) {
    tokens[static_cast<std::size_t>(a.id)] = a.content;
    types[static_cast<std::size_t>(a.id)] = a.special ? 3 : 4; // control, user-defined
  }
  std::vector<std::string> merges;
  for (const auto& [a, b] : spec.merges) merges.push_back(std::string(a).append(" ").append(b));
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", pre);
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_i32_array("tokenizer.ggml.token_type", types);
  w.add_string_array("tokenizer.ggml.merges", merges);
  if (c.bos_token_id)
    w.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(*c.bos_token_id));
  if (!c.eos_token_ids.empty())
    w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(c.eos_token_ids.front()));
  w.add_bool("tokenizer.ggml.add_bos_token", !spec.prefix_ids.empty());
  return {};
}

std::optional<gguf_matrices> gguf_matrices::parse(std::string_view name) {
  if (name == "f32") return gguf_matrices{};
  if (name == "q4_k_m" || name == "q5_k_m") {
    gguf_matrices m(name == "q4_k_m" ? quant_format::q4_k : quant_format::q5_k);
    m.k_mix = true;
    return m;
  }
  if (const std::optional<quant_format> f = parse_quant_format(name)) return gguf_matrices(f);
  return std::nullopt;
}

std::optional<quant_format> gguf_matrices::of(std::string_view tensor, int64_t layer,
                                              int64_t cols) const {
  const bool wider = tensor == "output.weight" ||
                     (layer % 2 == 0 && (tensor == "attn_v.weight" || tensor == "ffn_down.weight"));
  const std::optional<quant_format> f = k_mix && wider ? quant_format::q6_k : format;
  if (f && is_k_format(*f) && cols % quant_block_values(*f) != 0)
    switch (*f) {
    case quant_format::q6_k: return quant_format::q8_0;
    case quant_format::q5_k: return quant_format::q5_1;
    case quant_format::q4_k: return quant_format::q5_0;
    case quant_format::iq4_xs: return quant_format::iq4_nl;
    default: return quant_format::q4_0; // Q2_K, Q3_K
    }
  return f;
}

status export_gguf(const model_config& c, const model_weights& weights,
                   const gguf_matrices& matrices, gguf_writer w,
                   const std::filesystem::path& path) {
  const std::string arch(architecture_name(c.arch));
  const std::string p = arch + ".";
  w.add_string("general.architecture", arch);
  w.add_u32(p + "embedding_length", static_cast<uint32_t>(c.hidden_size));
  w.add_u32(p + "block_count", static_cast<uint32_t>(c.num_hidden_layers));
  w.add_u32(p + "feed_forward_length", static_cast<uint32_t>(c.intermediate_size));
  w.add_u32(p + "attention.head_count", static_cast<uint32_t>(c.num_attention_heads));
  w.add_u32(p + "attention.head_count_kv", static_cast<uint32_t>(c.num_key_value_heads));
  w.add_u32(p + "attention.key_length", static_cast<uint32_t>(c.head_dim));
  w.add_u32(p + "attention.value_length", static_cast<uint32_t>(c.head_dim));
  w.add_f32(p + "attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  w.add_f32(p + "rope.freq_base", static_cast<float>(c.rope_theta));
  w.add_u32(p + "context_length", static_cast<uint32_t>(c.max_position_embeddings));
  w.add_u32(p + "vocab_size", static_cast<uint32_t>(c.vocab_size));
  add_rope_scaling(c, w);

  // `format`: a matrix's (nullopt: fp32, as every vector).
  const auto add = [&](const std::string& name, const weight_view& v,
                       std::optional<quant_format> format, int64_t head_rows = 0) {
    std::vector<float> values = values_of(v);
    if (head_rows > 0) values = interleave_halves(values, v.rows(), v.cols(), head_rows);
    std::vector<uint64_t> dims{static_cast<uint64_t>(v.cols())};
    if (v.rank == 2) dims.push_back(static_cast<uint64_t>(v.rows()));
    else dims = {static_cast<uint64_t>(v.rows())};
    if (format) {
      const std::size_t row = quant_row_bytes(*format, v.cols());
      std::vector<std::byte> bytes(row * static_cast<std::size_t>(v.rows()));
      for (int64_t r = 0; r < v.rows(); ++r)
        quantize_row(*format, values.data() + r * v.cols(), v.cols(), bytes.data() + r * row);
      w.add_tensor(name, dims, ggml_type_of(*format), bytes);
    } else {
      w.add_tensor(name, dims, ggml_type::f32, std::as_bytes(std::span(values)));
    }
  };
  // A matrix `tensor` of layer `layer` (-1: none; name prefix `blk`) in the
  // format `matrices` gives it.
  const auto add_matrix = [&](const std::string& blk, std::string_view tensor,
                              const weight_view& v, int64_t layer, int64_t head_rows = 0) {
    add(blk + std::string(tensor), v, matrices.of(tensor, layer, v.cols()), head_rows);
  };
  // NOTE: llama-quantize's mixes quantise the embedding too: untied in the
  // base format, tied as the output matrix it also is.
  const std::optional<quant_format> embedding =
    matrices.k_mix ? matrices.of(c.tie_word_embeddings ? "output.weight" : "token_embd.weight", -1,
                                 c.hidden_size)
                   : std::nullopt;
  add("token_embd.weight", weights.embed_tokens(), embedding);
  const int64_t qk_head = c.arch == architecture::llama ? c.head_dim : 0;
  for (std::size_t l = 0; l < weights.layers().size(); ++l) {
    const layer_weights& lw = weights.layers()[l];
    const std::string b = "blk." + std::to_string(l) + ".";
    const auto layer = static_cast<int64_t>(l);
    add(b + "attn_norm.weight", lw.input_layernorm, std::nullopt);
    add_matrix(b, "attn_q.weight", lw.q_proj, layer, qk_head);
    add_matrix(b, "attn_k.weight", lw.k_proj, layer, qk_head);
    add_matrix(b, "attn_v.weight", lw.v_proj, layer);
    add_matrix(b, "attn_output.weight", lw.o_proj, layer);
    if (lw.q_bias) {
      add(b + "attn_q.bias", *lw.q_bias, std::nullopt);
      add(b + "attn_k.bias", *lw.k_bias, std::nullopt);
      add(b + "attn_v.bias", *lw.v_bias, std::nullopt);
    }
    if (lw.q_norm) {
      add(b + "attn_q_norm.weight", *lw.q_norm, std::nullopt);
      add(b + "attn_k_norm.weight", *lw.k_norm, std::nullopt);
    }
    add(b + "ffn_norm.weight", lw.post_attention_layernorm, std::nullopt);
    add_matrix(b, "ffn_gate.weight", lw.gate_proj, layer);
    add_matrix(b, "ffn_up.weight", lw.up_proj, layer);
    add_matrix(b, "ffn_down.weight", lw.down_proj, layer);
  }
  add("output_norm.weight", weights.norm(), std::nullopt);
  if (!c.tie_word_embeddings)
    add_matrix("", "output.weight", weights.lm_head(), -1);
  return w.write(path);
}

} // namespace kvactor::model
