#include "model/config.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "base/json.hpp"

namespace kvactor::model {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

std::optional<architecture> architecture_of_model_type(std::string_view t) {
  if (t == "llama" || t == "mistral") return architecture::llama;
  if (t == "qwen2") return architecture::qwen2;
  if (t == "qwen3") return architecture::qwen3;
  return std::nullopt;
}

std::optional<architecture> architecture_of_class(std::string_view c) {
  if (c == "LlamaForCausalLM" || c == "MistralForCausalLM") return architecture::llama;
  if (c == "Qwen2ForCausalLM") return architecture::qwen2;
  if (c == "Qwen3ForCausalLM") return architecture::qwen3;
  return std::nullopt;
}

result<struct rope_scaling> parse_rope_scaling(value v, std::string_view where) {
  struct rope_scaling rs;
  simdjson::ondemand::object obj;
  if (v.get_object().get(obj))
    return json::key_error(where, "rope_scaling", "expected an object or null");
  std::string type;
  bool has_factor = false;
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return json::parse_error(where, err);
    const std::string full = "rope_scaling." + std::string(key);
    value fv;
    if (auto err = field.value().get(fv)) return json::parse_error(where, err);
    if (key == "rope_type" || key == "type") {
      auto s = json::get_string(fv, where, full);
      if (!s) return s.error();
      // NOTE: older configs say "type", newer ones "rope_type"; both may be present.
      if (!type.empty() && type != *s)
        return json::key_error(where, "rope_scaling", "'type' and 'rope_type' disagree");
      type = *s;
    } else if (key == "factor") {
      auto d = json::get_number(fv, where, full);
      if (!d) return d.error();
      rs.factor = *d;
      has_factor = true;
    } else if (key == "low_freq_factor") {
      auto d = json::get_number(fv, where, full);
      if (!d) return d.error();
      rs.low_freq_factor = *d;
    } else if (key == "high_freq_factor") {
      auto d = json::get_number(fv, where, full);
      if (!d) return d.error();
      rs.high_freq_factor = *d;
    } else if (key == "original_max_position_embeddings") {
      auto i = json::get_int(fv, where, full);
      if (!i) return i.error();
      rs.original_max_position_embeddings = *i;
    }
  }
  if (type.empty()) return json::key_error(where, "rope_scaling", "has no 'rope_type' (or 'type')");
  if (type == "default") return rope_scaling{};
  if (type == "linear") {
    rs.type = rope_scaling::kind::linear;
  } else if (type == "llama3") {
    rs.type = rope_scaling::kind::llama3;
    if (rs.original_max_position_embeddings <= 0)
      return json::key_error(where, "rope_scaling.original_max_position_embeddings",
                             "llama3 scaling needs a positive value");
    if (!(rs.high_freq_factor > rs.low_freq_factor))
      return json::key_error(where, "rope_scaling.high_freq_factor",
                             "must be greater than low_freq_factor");
  } else {
    return json::key_error(where, "rope_scaling",
                           "unsupported rope type '" + type +
                             "' (kvactor supports linear and llama3)");
  }
  if (!has_factor) return json::key_error(where, "rope_scaling.factor", "missing");
  if (!positive_in_float(rs.factor))
    return json::key_error(where, "rope_scaling.factor", not_positive_in_float(rs.factor));
  // NOTE: llama3 scaling divides by these.
  for (const auto& [name, factor] :
       {std::pair{"rope_scaling.low_freq_factor", rs.low_freq_factor},
        std::pair{"rope_scaling.high_freq_factor", rs.high_freq_factor}})
    if (rs.type == rope_scaling::kind::llama3 && !positive_in_float(factor))
      return json::key_error(where, name, not_positive_in_float(factor));
  return rs;
}

result<std::vector<int64_t>> parse_eos(value v, std::string_view where) {
  std::vector<int64_t> ids;
  json_type t;
  if (v.type().get(t))
    return json::key_error(where, "eos_token_id", "expected an integer or a list");
  if (t == json_type::array) {
    simdjson::ondemand::array arr;
    if (v.get_array().get(arr)) return json::key_error(where, "eos_token_id", "expected a list");
    for (auto elem : arr) {
      value ev;
      if (auto err = elem.get(ev)) return json::parse_error(where, err);
      auto i = json::get_int(ev, where, "eos_token_id");
      if (!i) return i.error();
      ids.push_back(*i);
    }
    return ids;
  }
  auto i = json::get_int(v, where, "eos_token_id");
  if (!i)
    return json::key_error(where, "eos_token_id", "expected an integer or a list of integers");
  ids.push_back(*i);
  return ids;
}

struct raw_config {
  std::optional<std::string> model_type;
  std::optional<std::string> architecture_class;
  std::optional<int64_t> hidden_size, num_hidden_layers, num_attention_heads,
      num_key_value_heads, head_dim, intermediate_size, vocab_size, max_position_embeddings;
  // Mistral's attention window: absent (transformers' default, 4096), a
  // number, or null (none).
  std::optional<int64_t> sliding_window;
  bool sliding_window_null = false;
};

status validate(model_config& c, const raw_config& raw, std::string_view where) {
  struct required {
    const char* key;
    const std::optional<int64_t>& v;
    int64_t* out;
  };
  const required req[] = {
      {"hidden_size", raw.hidden_size, &c.hidden_size},
      {"num_hidden_layers", raw.num_hidden_layers, &c.num_hidden_layers},
      {"num_attention_heads", raw.num_attention_heads, &c.num_attention_heads},
      {"intermediate_size", raw.intermediate_size, &c.intermediate_size},
      {"vocab_size", raw.vocab_size, &c.vocab_size},
  };
  for (const auto& r : req) {
    if (!r.v) return json::key_error(where, r.key, "missing");
    if (*r.v <= 0)
      return json::key_error(where, r.key, "must be positive (got " + std::to_string(*r.v) + ")");
    *r.out = *r.v;
  }
  c.num_key_value_heads = raw.num_key_value_heads.value_or(c.num_attention_heads);
  if (c.num_key_value_heads <= 0)
    return json::key_error(where, "num_key_value_heads",
                           "must be positive (got " + std::to_string(c.num_key_value_heads) + ")");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    return json::key_error(where, "num_key_value_heads",
                           std::to_string(c.num_key_value_heads) +
                               " does not divide num_attention_heads " +
                               std::to_string(c.num_attention_heads));
  if (raw.head_dim) {
    if (*raw.head_dim <= 0)
      return json::key_error(where, "head_dim",
                             "must be positive (got " + std::to_string(*raw.head_dim) + ")");
    c.head_dim = *raw.head_dim;
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      return json::key_error(where, "num_attention_heads",
                             std::to_string(c.num_attention_heads) +
                               " does not divide hidden_size " + std::to_string(c.hidden_size) +
                               " (and head_dim is absent)");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0)
    return json::key_error(where, "head_dim",
                           "must be even for rotary embeddings (got " + std::to_string(c.head_dim) +
                             ")");
  // NOTE: defaults follow transformers' LlamaConfig / Qwen2Config / Qwen3Config.
  const int64_t default_max = c.arch == architecture::llama ? 2048 : 32768;
  c.max_position_embeddings = raw.max_position_embeddings.value_or(default_max);
  if (c.max_position_embeddings <= 0)
    return json::key_error(where, "max_position_embeddings", "must be positive");
  // Within its window, sliding-window attention is full attention: the
  // served context stops at the window, so kvactor's attention is exact.
  const bool mistral =
    raw.model_type == "mistral" || raw.architecture_class == "MistralForCausalLM";
  if (mistral && !raw.sliding_window_null)
    c.sliding_window = raw.sliding_window.value_or(4096);
  if (c.sliding_window && *c.sliding_window <= 0)
    return json::key_error(where, "sliding_window", "must be positive or null");
  if (c.sliding_window && *c.sliding_window < c.max_position_embeddings)
    c.max_position_embeddings = *c.sliding_window;
  if (!positive_in_float(c.rope_theta))
    return json::key_error(where, "rope_theta", not_positive_in_float(c.rope_theta));
  if (!positive_in_float(c.rms_norm_eps))
    return json::key_error(where, "rms_norm_eps", not_positive_in_float(c.rms_norm_eps));
  if (c.bos_token_id && (*c.bos_token_id < 0 || *c.bos_token_id >= c.vocab_size))
    return json::key_error(where, "bos_token_id", "outside [0, vocab_size)");
  for (auto id : c.eos_token_ids)
    if (id < 0 || id >= c.vocab_size)
      return json::key_error(where, "eos_token_id", "outside [0, vocab_size)");
  return {};
}

result<model_config> parse(simdjson::padded_string_view text, std::string_view where) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(text).get(doc)) return json::parse_error(where, err);
  simdjson::ondemand::object obj;
  if (auto err = doc.get_object().get(obj)) {
    if (err == simdjson::INCORRECT_TYPE) return error_in(where, "expected a JSON object");
    return json::parse_error(where, err);
  }
  model_config c;
  raw_config raw;
  std::optional<int64_t>* int_slots[] = {
      &raw.hidden_size,       &raw.num_hidden_layers, &raw.num_attention_heads,
      &raw.num_key_value_heads, &raw.head_dim,        &raw.intermediate_size,
      &raw.vocab_size,        &raw.max_position_embeddings};
  const std::string_view int_keys[] = {
      "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
      "head_dim",    "intermediate_size", "vocab_size",          "max_position_embeddings"};
  for (auto field : obj) {
    std::string_view key_view;
    if (auto err = field.unescaped_key().get(key_view)) return json::parse_error(where, err);
    const std::string key(key_view);
    value v;
    if (auto err = field.value().get(v)) return json::parse_error(where, err);
    if (key == "sliding_window" && json::is_null(v)) {
      raw.sliding_window_null = true;
      continue;
    }
    if (json::is_null(v)) continue; // transformers writes null for "not set"
    bool done = false;
    for (std::size_t i = 0; i < std::size(int_keys); ++i) {
      if (key == int_keys[i]) {
        auto n = json::get_int(v, where, key);
        if (!n) return n.error();
        *int_slots[i] = *n;
        done = true;
      }
    }
    if (done) continue;
    if (key == "sliding_window") {
      auto n = json::get_int(v, where, key);
      if (!n) return n.error();
      raw.sliding_window = *n;
    } else if (key == "model_type") {
      auto s = json::get_string(v, where, key);
      if (!s) return s.error();
      raw.model_type = *s;
    } else if (key == "architectures") {
      simdjson::ondemand::array arr;
      if (v.get_array().get(arr)) return json::key_error(where, key, "expected a list of strings");
      for (auto elem : arr) {
        value ev;
        if (auto err = elem.get(ev)) return json::parse_error(where, err);
        auto s = json::get_string(ev, where, key);
        if (!s) return s.error();
        if (!raw.architecture_class) raw.architecture_class = *s;
      }
    } else if (key == "rope_theta") {
      auto d = json::get_number(v, where, key);
      if (!d) return d.error();
      c.rope_theta = *d;
    } else if (key == "rms_norm_eps") {
      auto d = json::get_number(v, where, key);
      if (!d) return d.error();
      c.rms_norm_eps = *d;
    } else if (key == "tie_word_embeddings") {
      auto b = json::get_bool(v, where, key);
      if (!b) return b.error();
      c.tie_word_embeddings = *b;
    } else if (key == "bos_token_id") {
      auto n = json::get_int(v, where, key);
      if (!n) return n.error();
      c.bos_token_id = *n;
    } else if (key == "eos_token_id") {
      auto ids = parse_eos(v, where);
      if (!ids) return ids.error();
      c.eos_token_ids = std::move(*ids);
    } else if (key == "torch_dtype" || key == "dtype") {
      auto s = json::get_string(v, where, key);
      if (!s) return s.error();
      c.torch_dtype = *s;
    } else if (key == "rope_scaling") {
      auto rs = parse_rope_scaling(v, where);
      if (!rs) return rs.error();
      c.rope_scaling = *rs;
    } else if (key == "attention_bias" || key == "mlp_bias" || key == "use_sliding_window") {
      auto b = json::get_bool(v, where, key);
      if (!b) return b.error();
      if (*b) return json::key_error(where, key, "true is not supported by kvactor");
    } else if (key == "hidden_act") {
      auto s = json::get_string(v, where, key);
      if (!s) return s.error();
      if (*s != "silu")
        return json::key_error(where, key, "only \"silu\" is supported (got \"" + *s + "\")");
    }
  }
  if (auto end = json::expect_end(doc, where); !end) return end.error();

  std::optional<architecture> from_type, from_class;
  if (raw.model_type) {
    from_type = architecture_of_model_type(*raw.model_type);
    if (!from_type)
      return json::key_error(where, "model_type",
                             "unsupported model type '" + *raw.model_type +
                               "' (kvactor loads llama, mistral, qwen2 and qwen3)");
  }
  if (raw.architecture_class) {
    from_class = architecture_of_class(*raw.architecture_class);
    if (!from_class)
      return json::key_error(where, "architectures",
                             "unsupported architecture '" + *raw.architecture_class +
                                 "' (kvactor loads LlamaForCausalLM, MistralForCausalLM, "
                                 "Qwen2ForCausalLM and Qwen3ForCausalLM)");
  }
  if (!from_type && !from_class)
    return json::key_error(where, "model_type", "missing (and no 'architectures')");
  if (from_type && from_class && *from_type != *from_class)
    return json::key_error(where, "architectures",
                           "disagrees with model_type '" + *raw.model_type + "'");
  c.arch = from_type ? *from_type : *from_class;

  if (auto ok = validate(c, raw, where); !ok) return ok.error();
  return c;
}

} // namespace

std::string_view architecture_name(architecture a) {
  switch (a) {
  case architecture::qwen2: return "qwen2";
  case architecture::qwen3: return "qwen3";
  default: return "llama";
  }
}

bool positive_in_float(double v) {
  const auto f = static_cast<float>(v);
  return v > 0 && f > 0 && std::isfinite(f);
}

std::string not_positive_in_float(double v) {
  char got[32];
  std::snprintf(got, sizeof got, "%.9g", v);
  return std::string("must be a positive number within fp32's range (got ") + got + ")";
}

result<model_config> parse_config(std::string_view json_text, std::string_view source) {
  const simdjson::padded_string padded(json_text);
  return parse(padded, source);
}

result<model_config> load_config(const std::filesystem::path& file) {
  auto text = json::read_file(file);
  if (!text) return text.error();
  return parse(*text, file.string());
}

} // namespace kvactor::model
