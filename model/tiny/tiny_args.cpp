#include "model/tiny/tiny_args.hpp"

#include "model/gguf/gguf_export.hpp"

#include <charconv>
#include <cstdlib>

namespace kvactor::model::tiny {
namespace {

result<int64_t> parse_int(std::string_view key, std::string_view v) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size())
    return error_in("--" + std::string(key), "expected an integer, got '" + std::string(v) + "'");
  return n;
}

// "linear:F" or "llama3:N" (validate() checks that F and N are positive).
result<rope_scaling> parse_rope_scaling(std::string_view v) {
  const auto colon = v.find(':');
  const std::string_view kind = v.substr(0, colon);
  const std::string number(colon == std::string_view::npos ? "" : v.substr(colon + 1));
  rope_scaling rs;
  if (kind == "linear") {
    char* end = nullptr;
    rs.factor = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0')
      return error_in("--rope-scaling", "linear:F needs a number F");
    rs.type = rope_scaling::kind::linear;
    return rs;
  }
  if (kind == "llama3") {
    auto n = parse_int("rope-scaling", number);
    if (!n) return n.error();
    rs.type = rope_scaling::kind::llama3;
    rs.factor = 8;
    rs.low_freq_factor = 1;
    rs.high_freq_factor = 4;
    rs.original_max_position_embeddings = *n;
    return rs;
  }
  return error_in("--rope-scaling", "expected linear:F or llama3:N, got '" + std::string(v) + "'");
}

} // namespace

std::string usage() {
  return "usage: kvactor-make-tiny --out=DIR [options]\n"
         "Writes a complete model folder (config.json, model.safetensors, tokenizer.json)\n"
         "with deterministic seeded weights.\n"
         "  --style=llama|qwen2|qwen3  architecture (default llama)\n"
         "  --hidden=N              hidden size (512)\n"
         "  --layers=N              decoder layers (8)\n"
         "  --heads=N               query heads (8)\n"
         "  --kv-heads=N            key/value heads (4)\n"
         "  --head-dim=N            head dimension (64)\n"
         "  --intermediate=N        MLP size (1536)\n"
         "  --vocab=N               vocabulary size (4096)\n"
         "  --context=N             max_position_embeddings (4096)\n"
         "  --dtype=bf16|f16|f32    weights on disk (bf16)\n"
         "  --tied | --untied       tie the LM head to the embedding (untied)\n"
         "  --rope-theta=X          rotary base (10000)\n"
         "  --rope-scaling=linear:F | llama3:N   rope_scaling: linear by F, or llama3 as\n"
         "                          Llama 3.1's (factor 8, frequency factors 1 and 4)\n"
         "                          from an original context of N (none)\n"
         "  --seed=N                weight seed (0)\n"
         "  --shards=N              split the weights into N files + index json (1)\n"
         "  --gguf=TYPE[,TYPE]      also write DIR/model-TYPE.gguf: f32, q8_0, q4_0, q4_1,\n"
         "                          q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl or\n"
         "                          iq4_xs matrices, or q4_k_m, q5_k_m (Q4_K, Q5_K with\n"
         "                          some Q6_K, as llama.cpp's Q4_K_M, Q5_K_M)\n";
}

result<tiny_args> parse_args(std::span<const std::string_view> args) {
  tiny_args a;
  struct int_option {
    std::string_view key;
    int64_t* out;
  };
  tiny_options& o = a.options;
  const int_option ints[] = {{"hidden", &o.hidden_size},   {"layers", &o.num_layers},
                             {"heads", &o.num_heads},      {"kv-heads", &o.num_kv_heads},
                             {"head-dim", &o.head_dim},    {"intermediate", &o.intermediate_size},
                             {"vocab", &o.vocab_size},     {"context", &o.max_context},
                             {"shards", &o.num_shards}};
  for (std::string_view arg : args) {
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (arg == "--tied" || arg == "--untied") {
      o.tie_embeddings = arg == "--tied";
      continue;
    }
    if (arg.substr(0, 2) != "--" || arg.find('=') == std::string_view::npos)
      return error_in(arg, "expected --key=value (see --help)");
    const auto eq = arg.find('=');
    const std::string_view key = arg.substr(2, eq - 2), value = arg.substr(eq + 1);
    bool done = false;
    for (const auto& opt : ints) {
      if (key == opt.key) {
        auto n = parse_int(key, value);
        if (!n) return n.error();
        *opt.out = *n;
        done = true;
      }
    }
    if (done) continue;
    if (key == "out") {
      a.out = std::string(value);
    } else if (key == "style") {
      if (value == "llama") o.arch = architecture::llama;
      else if (value == "qwen2") o.arch = architecture::qwen2;
      else if (value == "qwen3") o.arch = architecture::qwen3;
      else return error_in("--style", "expected llama, qwen2 or qwen3");
    } else if (key == "gguf") {
      for (std::size_t at = 0; at <= value.size();) {
        const std::size_t end = std::min(value.find(',', at), value.size());
        const std::string_view type = value.substr(at, end - at);
        if (!gguf_matrices::parse(type))
          return error_in("--gguf",
                          "expected f32, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, "
                          "q6_k, iq4_nl, iq4_xs, q4_k_m or q5_k_m, got '" +
                            std::string(type) + "'");
        a.gguf.emplace_back(type);
        at = end + 1;
      }
    } else if (key == "dtype") {
      if (value == "bf16") o.on_disk = dtype::bf16;
      else if (value == "f16") o.on_disk = dtype::f16;
      else if (value == "f32") o.on_disk = dtype::f32;
      else return error_in("--dtype", "expected bf16, f16 or f32");
    } else if (key == "seed") {
      uint64_t s = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), s);
      if (ec != std::errc() || p != value.data() + value.size())
        return error_in("--seed", "expected an integer");
      o.seed = s;
    } else if (key == "rope-theta") {
      std::string v(value);
      char* end = nullptr;
      o.rope_theta = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(o.rope_theta > 0))
        return error_in("--rope-theta", "expected a positive number");
    } else if (key == "rope-scaling") {
      auto rs = parse_rope_scaling(value);
      if (!rs) return rs.error();
      o.rope_scaling = *rs;
    } else {
      return error_in(arg, "unknown option (see --help)");
    }
  }
  if (a.help) return a;
  if (a.out.empty()) return error_in("--out", "missing (the folder to write)");
  if (auto ok = validate(o); !ok)
    return error_in("--" + ok.error().message.substr(0, ok.error().message.find(':')),
                      ok.error().message.substr(ok.error().message.find(':') + 2));
  return a;
}

} // namespace kvactor::model::tiny
