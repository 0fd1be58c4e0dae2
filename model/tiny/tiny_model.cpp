#include "model/tiny/tiny_model.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "model/rng.hpp"
#include "model/safetensors_writer.hpp"
#include "model/tiny/tiny_tokenizer.hpp"

namespace kvactor::model::tiny {

status validate(const tiny_options& o) {
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"hidden", o.hidden_size},         {"layers", o.num_layers},     {"heads", o.num_heads},
      {"kv-heads", o.num_kv_heads},      {"head-dim", o.head_dim},     {"intermediate", o.intermediate_size},
      {"vocab", o.vocab_size},           {"context", o.max_context}};
  for (const auto& [name, v] : sizes)
    if (v <= 0) return make_error(name, "must be positive");
  if (o.num_shards <= 0) return make_error("shards", "must be positive");
  if (o.num_heads % o.num_kv_heads != 0) return make_error("kv-heads", "must divide heads");
  if (o.head_dim % 2 != 0) return make_error("head-dim", "must be even");
  if (o.vocab_size < 256 + num_special_tokens)
    return make_error("vocab", "must be at least " + std::to_string(256 + num_special_tokens) +
                                   " (256 byte tokens and the special tokens)");
  return {};
}

std::string config_json(const tiny_options& o) {
  const bool llama = o.arch == architecture::llama;
  // NOTE: classic Llama configs omit head_dim when it is hidden / heads; the
  // loader must derive it, so the tiny model does the same.
  const bool write_head_dim = !llama || o.head_dim * o.num_heads != o.hidden_size;
  std::string dt = o.on_disk == dtype::bf16 ? "bfloat16" : o.on_disk == dtype::f16 ? "float16" : "float32";
  char theta[64];
  std::snprintf(theta, sizeof theta, "%.1f", o.rope_theta);
  std::string s = "{\n";
  s += std::string("  \"architectures\": [\"") + (llama ? "LlamaForCausalLM" : "Qwen3ForCausalLM") + "\"],\n";
  s += "  \"attention_bias\": false,\n";
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
  s += std::string("  \"model_type\": \"") + (llama ? "llama" : "qwen3") + "\",\n";
  s += "  \"num_attention_heads\": " + std::to_string(o.num_heads) + ",\n";
  s += "  \"num_hidden_layers\": " + std::to_string(o.num_layers) + ",\n";
  s += "  \"num_key_value_heads\": " + std::to_string(o.num_kv_heads) + ",\n";
  s += std::string("  \"rms_norm_eps\": ") + (llama ? "1e-05" : "1e-06") + ",\n";
  s += "  \"rope_scaling\": null,\n";
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

std::vector<tensor_spec> tensor_specs(const tiny_options& o) {
  const std::int64_t h = o.hidden_size, q = o.num_heads * o.head_dim, kv = o.num_kv_heads * o.head_dim;
  std::vector<tensor_spec> specs;
  specs.push_back({"model.embed_tokens.weight", {o.vocab_size, h}});
  for (std::int64_t i = 0; i < o.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    specs.push_back({p + "input_layernorm.weight", {h}, true});
    specs.push_back({p + "self_attn.q_proj.weight", {q, h}});
    specs.push_back({p + "self_attn.k_proj.weight", {kv, h}});
    specs.push_back({p + "self_attn.v_proj.weight", {kv, h}});
    specs.push_back({p + "self_attn.o_proj.weight", {h, q}});
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
  std::int64_t n = 1;
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

status write_weights(const std::filesystem::path& file, const tiny_options& o) {
  safetensors_writer w;
  w.set_metadata("format", "pt");
  for (const auto& spec : tensor_specs(o)) {
    const auto values = tensor_values(o, spec);
    w.add_f32(spec.name, o.on_disk, spec.shape, values);
  }
  return w.write(file);
}

namespace {

std::string shard_name(std::int64_t i, std::int64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05lld-of-%05lld.safetensors", static_cast<long long>(i + 1),
                static_cast<long long>(n));
  return buf;
}

status write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(file.string(), "cannot create file");
  out << text;
  out.close();
  if (!out) return make_error(file.string(), "write failed");
  return {};
}

} // namespace

status write_sharded_weights(const std::filesystem::path& dir, const tiny_options& o) {
  const auto specs = tensor_specs(o);
  std::int64_t total = 0;
  for (const auto& spec : specs) {
    std::int64_t n = 1;
    for (auto d : spec.shape) n *= d;
    total += n * static_cast<std::int64_t>(dtype_size(o.on_disk));
  }
  const std::int64_t per_shard = (total + o.num_shards - 1) / o.num_shards;
  std::vector<std::pair<std::string, std::string>> weight_map; // tensor, file
  std::int64_t shard = 0, in_shard = 0;
  safetensors_writer w;
  w.set_metadata("format", "pt");
  auto flush = [&]() -> status {
    auto ok = w.write(dir / shard_name(shard, o.num_shards));
    w = safetensors_writer{};
    w.set_metadata("format", "pt");
    in_shard = 0;
    ++shard;
    return ok;
  };
  for (const auto& spec : specs) {
    const auto values = tensor_values(o, spec);
    const auto bytes = static_cast<std::int64_t>(values.size() * dtype_size(o.on_disk));
    // NOTE: a tensor never spans files; a shard is closed once it is full,
    // keeping the last shard for whatever remains.
    if (in_shard > 0 && in_shard + bytes > per_shard && shard + 1 < o.num_shards)
      if (auto ok = flush(); !ok) return ok;
    w.add_f32(spec.name, o.on_disk, spec.shape, values);
    weight_map.emplace_back(spec.name, shard_name(shard, o.num_shards));
    in_shard += bytes;
  }
  if (auto ok = flush(); !ok) return ok;
  // Empty shards (more shards than tensors allow) are still written, so that
  // every file the names promise exists.
  while (shard < o.num_shards)
    if (auto ok = flush(); !ok) return ok;

  std::sort(weight_map.begin(), weight_map.end());
  std::string index = "{\n  \"metadata\": {\n    \"total_size\": " + std::to_string(total) +
                      "\n  },\n  \"weight_map\": {";
  for (std::size_t i = 0; i < weight_map.size(); ++i) {
    index += i ? ",\n    " : "\n    ";
    index += json_quote(weight_map[i].first);
    index += ": ";
    index += json_quote(weight_map[i].second);
  }
  index += "\n  }\n}\n";
  return write_text(dir / "model.safetensors.index.json", index);
}

status write_model(const std::filesystem::path& dir, const tiny_options& o) {
  if (auto ok = validate(o); !ok) return ok;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(dir.string(), "cannot create directory: " + ec.message());
  // NOTE: weights of an earlier run in another layout would shadow or
  // contradict the new ones (an old index wins over model.safetensors).
  std::vector<std::filesystem::path> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "model.safetensors" || name == "model.safetensors.index.json" ||
        (name.starts_with("model-") && name.ends_with(".safetensors")))
      stale.push_back(it->path());
  }
  if (ec) return make_error(dir.string(), "cannot list the folder: " + ec.message());
  for (const auto& p : stale)
    if (!std::filesystem::remove(p, ec) && ec) return make_error(p.string(), "cannot remove: " + ec.message());
  if (auto ok = write_text(dir / "config.json", config_json(o)); !ok) return ok;
  if (auto ok = write_text(dir / "tokenizer.json", write_tokenizer_json(make_tokenizer_spec(o))); !ok) return ok;
  if (o.num_shards > 1) return write_sharded_weights(dir, o);
  return write_weights(dir / "model.safetensors", o);
}

} // namespace kvactor::model::tiny
