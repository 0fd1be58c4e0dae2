#include "model/tiny/tiny_model.hpp"
#include "base/json.hpp"

#include <cstdio>
#include <fstream>

#include "model/rng.hpp"
#include "model/safetensors_writer.hpp"
#include "model/tiny/tiny_tokenizer.hpp"

namespace kvactor::model::tiny {

status validate(const tiny_options& o) {
  const std::pair<const char*, int64_t> sizes[] = {
    {"hidden", o.hidden_size},    {"layers", o.num_layers},  {"heads", o.num_heads},
    {"kv-heads", o.num_kv_heads}, {"head-dim", o.head_dim},  {"intermediate", o.intermediate_size},
    {"vocab", o.vocab_size},      {"context", o.max_context}};
  for (const auto& [name, v] : sizes)
    if (v <= 0) return error_in(name, "must be positive");
  if (o.num_shards <= 0) return error_in("shards", "must be positive");
  if (o.num_heads % o.num_kv_heads != 0) return error_in("kv-heads", "must divide heads");
  if (o.head_dim % 2 != 0) return error_in("head-dim", "must be even");
  if (o.rope_scaling.type != rope_scaling::kind::none && !(o.rope_scaling.factor > 0))
    return error_in("rope-scaling", "the factor must be positive");
  if (o.rope_scaling.type == rope_scaling::kind::llama3 &&
      o.rope_scaling.original_max_position_embeddings <= 0)
    return error_in("rope-scaling", "the original context must be positive");
  if (o.vocab_size < 256 + num_special_tokens)
    return error_in("vocab", "must be at least " + std::to_string(256 + num_special_tokens) +
                                   " (256 byte tokens and the special tokens)");
  return {};
}

namespace {

// config.json's rope_scaling value, as transformers writes it.
std::string rope_scaling_json(const struct rope_scaling& rs) {
  char out[256];
  switch (rs.type) {
  case rope_scaling::kind::none: return "null";
  case rope_scaling::kind::linear:
    std::snprintf(out, sizeof out, "{\"factor\": %.17g, \"rope_type\": \"linear\"}", rs.factor);
    return out;
  case rope_scaling::kind::llama3:
    std::snprintf(out, sizeof out,
                  "{\"factor\": %.17g, \"high_freq_factor\": %.17g, \"low_freq_factor\": %.17g, "
                  "\"original_max_position_embeddings\": %lld, \"rope_type\": \"llama3\"}",
                  rs.factor, rs.high_freq_factor, rs.low_freq_factor,
                  static_cast<long long>(rs.original_max_position_embeddings));
    return out;
  }
  return "null";
}

} // namespace

std::string config_json(const tiny_options& o) {
  const bool llama = o.arch == architecture::llama;
  // NOTE: classic Llama configs omit head_dim when it is hidden / heads; the
  // loader must derive it, so the tiny model does the same.
  const bool write_head_dim = !llama || o.head_dim * o.num_heads != o.hidden_size;
  std::string dt = o.on_disk == dtype::bf16  ? "bfloat16"
                   : o.on_disk == dtype::f16 ? "float16"
                                             : "float32";
  char theta[64];
  std::snprintf(theta, sizeof theta, "%.1f", o.rope_theta);
  std::string s = "{\n";
  const std::string_view type = architecture_name(o.arch);
  const std::string_view type_class = llama                            ? "LlamaForCausalLM"
                                      : o.arch == architecture::qwen2 ? "Qwen2ForCausalLM"
                                                                       : "Qwen3ForCausalLM";
  s += "  \"architectures\": [\"";
  s += type_class;
  s += "\"],\n";
  if (o.arch != architecture::qwen2) s += "  \"attention_bias\": false,\n";
  s += "  \"attention_dropout\": 0.0,\n";
  s += "  \"bos_token_id\": " + std::to_string(bos_id(o)) + ",\n";
  s += "  \"eos_token_id\": " + std::to_string(eos_id(o)) + ",\n";
  if (write_head_dim) s += "  \"head_dim\": " + std::to_string(o.head_dim) + ",\n";
  s += "  \"hidden_act\": \"silu\",\n";
  s += "  \"hidden_size\": " + std::to_string(o.hidden_size) + ",\n";
  s += "  \"initializer_range\": 0.02,\n";
  s += "  \"intermediate_size\": " + std::to_string(o.intermediate_size) + ",\n";
  s += "  \"max_position_embeddings\": " + std::to_string(o.max_context) + ",\n";
  if (llama) s += "  \"mlp_bias\": false,\n";
  s += "  \"model_type\": \"";
  s += type;
  s += "\",\n";
  s += "  \"num_attention_heads\": " + std::to_string(o.num_heads) + ",\n";
  s += "  \"num_hidden_layers\": " + std::to_string(o.num_layers) + ",\n";
  s += "  \"num_key_value_heads\": " + std::to_string(o.num_kv_heads) + ",\n";
  s += std::string("  \"rms_norm_eps\": ") + (llama ? "1e-05" : "1e-06") + ",\n";
  s += "  \"rope_scaling\": " + rope_scaling_json(o.rope_scaling) + ",\n";
  s += std::string("  \"rope_theta\": ") + theta + ",\n";
  s += std::string("  \"tie_word_embeddings\": ") + (o.tie_embeddings ? "true" : "false") + ",\n";
  s += "  \"torch_dtype\": \"" + dt + "\",\n";
  s += "  \"transformers_version\": \"4.51.0\",\n";
  s += "  \"use_cache\": true,\n";
  if (!llama) s += "  \"use_sliding_window\": false,\n";
  s += "  \"vocab_size\": " + std::to_string(o.vocab_size) + "\n";
  s += "}\n";
  return s;
}

std::string generation_config_json(const tiny_options& o) {
  return "{\n  \"_from_model_config\": true,\n  \"bos_token_id\": " + std::to_string(bos_id(o)) +
         ",\n  \"eos_token_id\": " + std::to_string(eos_id(o)) +
         ",\n  \"transformers_version\": \"4.51.0\"\n}\n";
}

std::string tokenizer_config_json(const tiny_options& o) {
  // NOTE: PreTrainedTokenizerFast uses tokenizer.json as it is (as Llama 3
  // ships); kvactor itself reads only tokenizer.json.
  std::string s = "{\n  \"bos_token\": ";
  s += json::quote(bos_token);
  s += ",\n  \"clean_up_tokenization_spaces\": false,\n  \"eos_token\": ";
  s += json::quote(eos_token);
  s += ",\n  \"model_max_length\": " + std::to_string(o.max_context);
  s += ",\n  \"tokenizer_class\": \"PreTrainedTokenizerFast\"\n}\n";
  return s;
}

std::vector<tensor_spec> tensor_specs(const tiny_options& o) {
  const int64_t h = o.hidden_size, q = o.num_heads * o.head_dim, kv = o.num_kv_heads * o.head_dim;
  std::vector<tensor_spec> specs;
  specs.push_back({"model.embed_tokens.weight", {o.vocab_size, h}});
  for (int64_t i = 0; i < o.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    specs.push_back({p + "input_layernorm.weight", {h}, true});
    specs.push_back({p + "self_attn.q_proj.weight", {q, h}});
    specs.push_back({p + "self_attn.k_proj.weight", {kv, h}});
    specs.push_back({p + "self_attn.v_proj.weight", {kv, h}});
    specs.push_back({p + "self_attn.o_proj.weight", {h, q}});
    if (o.arch == architecture::qwen2) {
      specs.push_back({p + "self_attn.q_proj.bias", {q}, false, true});
      specs.push_back({p + "self_attn.k_proj.bias", {kv}, false, true});
      specs.push_back({p + "self_attn.v_proj.bias", {kv}, false, true});
    }
    if (o.arch == architecture::qwen3) {
      specs.push_back({p + "self_attn.q_norm.weight", {o.head_dim}, true});
      specs.push_back({p + "self_attn.k_norm.weight", {o.head_dim}, true});
    }
    specs.push_back({p + "post_attention_layernorm.weight", {h}, true});
    specs.push_back({p + "mlp.gate_proj.weight", {o.intermediate_size, h}});
    specs.push_back({p + "mlp.up_proj.weight", {o.intermediate_size, h}});
    specs.push_back({p + "mlp.down_proj.weight", {h, o.intermediate_size}});
  }
  specs.push_back({"model.norm.weight", {h}, true});
  if (!o.tie_embeddings) specs.push_back({"lm_head.weight", {o.vocab_size, h}});
  return specs;
}

std::vector<float> tensor_values(const tiny_options& o, const tensor_spec& spec) {
  int64_t n = 1;
  for (auto d : spec.shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  rng r(mix64(o.seed) ^ hash_name(spec.name));
  // NOTE: norm weights are 1 + noise rather than exactly 1, so that a forward
  // pass that ignores a norm weight (or applies the wrong one) is caught.
  const double scale = spec.is_norm ? 0.05 : 0.02;
  const double offset = spec.is_norm ? 1.0 : 0.0;
  for (auto& x : v) x = static_cast<float>(offset + scale * r.normal());
  return v;
}

namespace {

status write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return error_in(file.string(), "cannot create file");
  out << text;
  out.close();
  if (!out) return error_in(file.string(), "write failed");
  return {};
}

} // namespace

status write_model(const std::filesystem::path& dir, const tiny_options& o) {
  if (auto ok = validate(o); !ok) return ok;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return error_in(dir.string(), "cannot create directory: " + ec.message());
  // NOTE: weights of an earlier run in another layout would shadow or
  // contradict the new ones (an old index wins over model.safetensors).
  std::vector<std::filesystem::path> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "model.safetensors" || name == "model.safetensors.index.json" ||
        (name.starts_with("model-") && name.ends_with(".safetensors")))
      stale.push_back(it->path());
  }
  if (ec) return error_in(dir.string(), "cannot list the folder: " + ec.message());
  for (const auto& p : stale)
    if (!std::filesystem::remove(p, ec) && ec)
      return error_in(p.string(), "cannot remove: " + ec.message());
  if (auto ok = write_text(dir / "config.json", config_json(o)); !ok) return ok;
  if (auto ok = write_text(dir / "generation_config.json", generation_config_json(o)); !ok)
    return ok;
  if (auto ok = write_text(dir / "tokenizer_config.json", tokenizer_config_json(o)); !ok) return ok;
  if (auto ok = write_text(dir / "tokenizer.json", write_tokenizer_json(make_tokenizer_spec(o)));
      !ok)
    return ok;
  if (o.num_shards > 1) return write_sharded_weights(dir, o);
  return write_weights(dir / "model.safetensors", o);
}

} // namespace kvactor::model::tiny
