#include "model/gguf/gguf_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace kvactor::model {
namespace {

std::optional<architecture> architecture_of_gguf(std::string_view name) {
  if (name == "llama") return architecture::llama;
  if (name == "qwen2") return architecture::qwen2;
  if (name == "qwen3") return architecture::qwen3;
  return std::nullopt;
}

// A positive integer of any width that fits a model_config field.
result<int64_t> positive(const gguf_file& f, const std::string& key) {
  auto v = f.uint(key);
  if (!v) return v.error();
  // NOTE: no dimension or id comes near 2^31; anything larger is corrupt and
  // would overflow the products of sizes later.
  if (*v == 0 || *v >= (1ull << 31))
    return f.key_error(key, "must be positive and below 2^31 (got " + std::to_string(*v) + ")");
  return static_cast<int64_t>(*v);
}

// A float32 or float64 that positive_in_float (config.hpp) allows: an
// infinite RoPE base or norm epsilon, or one rounded to 0, would turn every
// logit into the same number or into NaN.
result<double> positive_number(const gguf_file& f, const std::string& key) {
  auto v = f.number(key);
  if (!v) return v.error();
  if (!positive_in_float(*v)) return f.key_error(key, not_positive_in_float(*v));
  return *v;
}

// An optional key: nullopt when absent.
result<std::optional<int64_t>> optional_positive(const gguf_file& f, const std::string& key) {
  if (!f.contains(key)) return std::optional<int64_t>{};
  auto v = positive(f, key);
  if (!v) return v.error();
  return std::optional<int64_t>{*v};
}

result<struct rope_scaling> parse_rope_scaling(const gguf_file& f, const std::string& prefix) {
  struct rope_scaling rs;
  const std::string type_key = prefix + "rope.scaling.type";
  const std::string factor_key = prefix + "rope.scaling.factor";
  // NOTE: older files carry only `<arch>.rope.scale_linear`, a linear factor.
  const std::string old_key = prefix + "rope.scale_linear";
  std::string type = "none";
  if (f.contains(type_key)) {
    auto t = f.str(type_key);
    if (!t) return t.error();
    type = *t;
  } else if (f.contains(old_key)) {
    type = "linear";
  }
  if (type == "none") return rs;
  if (type != "linear")
    return f.key_error(type_key, "unsupported rope scaling '" + type +
                                   "' (kvactor supports none and linear)");
  const std::string& key = f.contains(factor_key) || !f.contains(old_key) ? factor_key : old_key;
  auto factor = positive_number(f, key);
  if (!factor) return factor.error();
  rs.type = rope_scaling::kind::linear;
  rs.factor = *factor;
  return rs;
}

result<int64_t> vocab_size(const gguf_file& f, const std::string& prefix) {
  const std::string key = prefix + "vocab_size";
  if (f.contains(key)) return positive(f, key);
  auto n = f.array_size("tokenizer.ggml.tokens");
  if (!n) return n.error();
  if (*n == 0 || *n >= (1ull << 31))
    return f.key_error("tokenizer.ggml.tokens", "holds " + std::to_string(*n) +
                                                  " tokens (expected 1 to below 2^31)");
  return static_cast<int64_t>(*n);
}

status check_token_ids(const gguf_file& f, model_config& c) {
  auto token = [&](const char* key) -> result<std::optional<int64_t>> {
    if (!f.contains(key)) return std::optional<int64_t>{};
    auto id = f.uint(key);
    if (!id) return id.error();
    if (*id >= static_cast<uint64_t>(c.vocab_size))
      return f.key_error(key, "token id " + std::to_string(*id) + " outside [0, vocab_size " +
                                std::to_string(c.vocab_size) + ")");
    return std::optional<int64_t>{static_cast<int64_t>(*id)};
  };
  auto bos = token("tokenizer.ggml.bos_token_id");
  if (!bos) return bos.error();
  c.bos_token_id = *bos;
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    auto id = token(key);
    if (!id) return id.error();
    if (*id && std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), **id) ==
                 c.eos_token_ids.end())
      c.eos_token_ids.push_back(**id);
  }
  return {};
}

error tensor_error(const gguf_file& f, std::string_view name, const std::string& what) {
  return error_in(f.path().string(), "tensor '" + std::string(name) + "': " + what);
}

// Llama 3.1's llama3 scaling as llama.cpp's converter stores it: one divisor
// per dimension pair, fp32, in rope_freqs.weight. Empty when it is absent.
result<std::vector<double>> frequency_divisors(const gguf_file& f, int64_t head_dim) {
  const gguf_tensor_info* t = f.find("rope_freqs.weight");
  if (t == nullptr) return std::vector<double>{};
  const auto half = static_cast<uint64_t>(head_dim / 2);
  if (t->dims.size() != 1 || t->dims[0] != half)
    return tensor_error(f, t->name, "expected dims {" + std::to_string(half) +
                                      "} (one divisor per pair of the head size " +
                                      std::to_string(head_dim) + ")");
  if (t->type != ggml_type::f32)
    return tensor_error(f, t->name,
                        "type " + std::string(ggml_type_name(t->type)) + " (expected F32)");
  std::vector<float> values(half);
  std::memcpy(values.data(), f.data(*t), half * sizeof(float));
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!(values[i] > 0) || !std::isfinite(values[i]))
      return tensor_error(f, t->name, "value " + std::to_string(i) + " is " +
                                        std::to_string(values[i]) +
                                        " (expected a positive divisor)");
  return std::vector<double>(values.begin(), values.end());
}

status check_embedding(const gguf_file& f, const model_config& c) {
  if (const auto* t = f.find("token_embd.weight")) {
    if (t->dims.size() != 2 || t->dims[0] != static_cast<uint64_t>(c.hidden_size) ||
        t->dims[1] != static_cast<uint64_t>(c.vocab_size))
      return tensor_error(f, t->name, "expected dims {" + std::to_string(c.hidden_size) + ", " +
                                        std::to_string(c.vocab_size) +
                                        "} (embedding_length, vocab_size)");
  }
  return {};
}

} // namespace

result<model_config> gguf_model_config(const gguf_file& f) {
  auto arch_name = f.str("general.architecture");
  if (!arch_name) return arch_name.error();
  const auto arch = architecture_of_gguf(*arch_name);
  if (!arch)
    return f.key_error("general.architecture",
                       "unsupported architecture '" + *arch_name +
                         "' (kvactor loads llama, qwen2 and qwen3)");
  model_config c;
  c.arch = *arch;
  const std::string p = *arch_name + ".";
  struct required {
    const char* key;
    int64_t* out;
  };
  const required req[] = {
    {"embedding_length", &c.hidden_size},
    {"block_count", &c.num_hidden_layers},
    {"feed_forward_length", &c.intermediate_size},
    {"attention.head_count", &c.num_attention_heads},
  };
  for (const auto& r : req) {
    auto v = positive(f, p + r.key);
    if (!v) return v.error();
    *r.out = *v;
  }
  auto kv_heads = optional_positive(f, p + "attention.head_count_kv");
  if (!kv_heads) return kv_heads.error();
  c.num_key_value_heads = kv_heads->value_or(c.num_attention_heads);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    return f.key_error(p + "attention.head_count_kv",
                       std::to_string(c.num_key_value_heads) + " does not divide head_count " +
                         std::to_string(c.num_attention_heads));
  auto key_length = optional_positive(f, p + "attention.key_length");
  if (!key_length) return key_length.error();
  if (*key_length) {
    c.head_dim = **key_length;
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      return f.key_error(p + "attention.head_count",
                         std::to_string(c.num_attention_heads) +
                           " does not divide embedding_length " + std::to_string(c.hidden_size) +
                           " (and attention.key_length is absent)");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0)
    return f.key_error(p + "attention.key_length", "head size " + std::to_string(c.head_dim) +
                                                     " must be even for rotary embeddings");
  for (const char* key : {"attention.value_length", "rope.dimension_count"}) {
    auto v = optional_positive(f, p + key);
    if (!v) return v.error();
    if (*v && **v != c.head_dim)
      return f.key_error(p + key, std::to_string(**v) + " differs from the head size " +
                                    std::to_string(c.head_dim) + " (not supported by kvactor)");
  }
  auto eps = positive_number(f, p + "attention.layer_norm_rms_epsilon");
  if (!eps) return eps.error();
  c.rms_norm_eps = *eps;
  if (f.contains(p + "rope.freq_base")) {
    auto theta = positive_number(f, p + "rope.freq_base");
    if (!theta) return theta.error();
    c.rope_theta = *theta;
  }
  auto scaling = parse_rope_scaling(f, p);
  if (!scaling) return scaling.error();
  c.rope_scaling = *scaling;
  auto divisors = frequency_divisors(f, c.head_dim);
  if (!divisors) return divisors.error();
  c.rope_scaling.frequency_divisors = std::move(*divisors);
  // NOTE: defaults as config.cpp's (transformers' LlamaConfig / Qwen2Config).
  auto context = optional_positive(f, p + "context_length");
  if (!context) return context.error();
  c.max_position_embeddings = context->value_or(c.arch == architecture::llama ? 2048 : 32768);
  auto vocab = vocab_size(f, p);
  if (!vocab) return vocab.error();
  c.vocab_size = *vocab;
  c.tie_word_embeddings = f.find("output.weight") == nullptr;
  if (auto ok = check_token_ids(f, c); !ok) return ok.error();
  if (auto ok = check_embedding(f, c); !ok) return ok.error();
  return c;
}

} // namespace kvactor::model
