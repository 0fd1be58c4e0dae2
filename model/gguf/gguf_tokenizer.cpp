#include "model/gguf/gguf_tokenizer.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "base/utf8.hpp"
#include "model/tokenizer/byte_level.hpp"
#include "model/tokenizer/score_merges.hpp"

namespace kvactor::model {
namespace {

constexpr std::string_view model_key = "tokenizer.ggml.model";
constexpr std::string_view tokens_key = "tokenizer.ggml.tokens";
constexpr std::string_view types_key = "tokenizer.ggml.token_type";
constexpr std::string_view scores_key = "tokenizer.ggml.scores";
constexpr std::string_view merges_key = "tokenizer.ggml.merges";
constexpr std::string_view pre_key = "tokenizer.ggml.pre";

// tokenizer.ggml.token_type's values (llama.cpp's llama_token_type).
enum token_type : int32_t {
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6
};

// What both models share: the tokens, their types, the special ids.
struct vocabulary {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::unordered_map<std::string_view, token_id> ids; // views into `tokens`
  std::optional<token_id> bos, eos, unk;
};

// An id key: nullopt when absent, an error when outside the vocabulary.
result<std::optional<token_id>> optional_id(const gguf_file& f, std::string_view key,
                                            std::size_t num_tokens) {
  if (!f.contains(key)) return std::optional<token_id>{};
  auto id = f.uint(key);
  if (!id) return id.error();
  if (*id >= num_tokens)
    return f.key_error(key, "token id " + std::to_string(*id) + " outside [0, " +
                              std::to_string(num_tokens) + ") (tokenizer.ggml.tokens)");
  return std::optional<token_id>{static_cast<token_id>(*id)};
}

result<bool> optional_bool(const gguf_file& f, std::string_view key, bool otherwise) {
  if (!f.contains(key)) return otherwise;
  return f.boolean(key);
}

result<vocabulary> read_vocabulary(const gguf_file& f) {
  vocabulary v;
  auto tokens = f.string_array(tokens_key);
  if (!tokens) return tokens.error();
  if (tokens->empty() || tokens->size() > static_cast<std::size_t>(INT32_MAX))
    return f.key_error(tokens_key, "holds " + std::to_string(tokens->size()) + " tokens");
  v.tokens = std::move(*tokens);
  const std::size_t n = v.tokens.size();
  // NOTE: the converters always write the types; without them, control
  // tokens would be split like text.
  auto types = f.i32_array(types_key);
  if (!types) return types.error();
  if (types->size() != n)
    return f.key_error(types_key, "holds " + std::to_string(types->size()) + " types for " +
                                    std::to_string(n) + " tokens");
  v.types = std::move(*types);
  v.ids.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (v.types[i] < normal || v.types[i] > byte)
      return f.key_error(types_key, "token " + std::to_string(i) + " has type " +
                                      std::to_string(v.types[i]) + " (expected 1 to 6)");
    if (!v.ids.emplace(v.tokens[i], static_cast<token_id>(i)).second)
      return f.key_error(tokens_key, "token '" + v.tokens[i] + "' appears twice (ids " +
                                       std::to_string(v.ids[v.tokens[i]]) + " and " +
                                       std::to_string(i) + ")");
  }
  for (auto [key, out] : {std::pair{"tokenizer.ggml.bos_token_id", &v.bos},
                          std::pair{"tokenizer.ggml.eos_token_id", &v.eos},
                          std::pair{"tokenizer.ggml.unknown_token_id", &v.unk},
                          std::pair{"tokenizer.ggml.padding_token_id",
                                    static_cast<std::optional<token_id>*>(nullptr)}}) {
    auto id = optional_id(f, key, n);
    if (!id) return id.error();
    if (out) *out = *id;
  }
  return v;
}

// Every token in the vocabulary (as Hugging Face's converter keeps control
// tokens there too); unknown, control and user-defined ones also as added
// tokens, which the tokenizer matches in the raw text before anything else.
void add_tokens(const vocabulary& v, tokenizer_spec& spec) {
  spec.vocab.reserve(v.tokens.size());
  for (std::size_t i = 0; i < v.tokens.size(); ++i) {
    const auto id = static_cast<token_id>(i);
    spec.vocab.emplace_back(v.tokens[i], id);
    const int32_t t = v.types[i];
    // NOTE: an empty token can never match; the tokenizer needs content.
    if ((t == unknown || t == control || t == user_defined) && !v.tokens[i].empty())
      spec.added_tokens.push_back({id, v.tokens[i], t != user_defined, false, false});
  }
}

// BOS before a text and EOS after it, as the flags ask.
status add_post_processor(const gguf_file& f, const vocabulary& v, bool bos_by_default,
                          tokenizer_spec& spec) {
  struct flag {
    std::string_view key, id_key;
    std::optional<token_id> id;
    bool otherwise;
    std::vector<token_id>& out;
  };
  for (const flag& x : {flag{"tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id", v.bos,
                             bos_by_default, spec.prefix_ids},
                        flag{"tokenizer.ggml.add_eos_token", "tokenizer.ggml.eos_token_id", v.eos,
                             false, spec.suffix_ids}}) {
    auto add = optional_bool(f, x.key, x.otherwise);
    if (!add) return add.error();
    if (!*add) continue;
    if (!x.id) return f.key_error(x.id_key, "missing, but " + std::string(x.key) + " is true");
    x.out.push_back(*x.id);
  }
  return {};
}

// "<0x41>": the spelling byte fallback looks up.
bool is_byte_token(std::string_view s) {
  constexpr std::string_view hex = "0123456789ABCDEF";
  return s.size() == 6 && s.starts_with("<0x") && s.back() == '>' &&
         hex.find(s[3]) != hex.npos && hex.find(s[4]) != hex.npos;
}

// SentencePiece-style BPE, mapped as Llama 2's tokenizer.json is: its
// normalizer, no pre-tokenizer, byte fallback, consecutive unknown
// characters one <unk>, and the '▁' decoder.
status sentencepiece(const gguf_file& f, const vocabulary& v, tokenizer_spec& spec) {
  auto scores = f.f32_array(scores_key);
  if (!scores) return scores.error();
  if (scores->size() != v.tokens.size())
    return f.key_error(scores_key, "holds " + std::to_string(scores->size()) + " scores for " +
                                     std::to_string(v.tokens.size()) + " tokens");
  for (std::size_t i = 0; i < scores->size(); ++i)
    if (std::isnan((*scores)[i]))
      return f.key_error(scores_key, "token " + std::to_string(i) + " has a NaN score");
  spec.bpe.byte_level = false;
  spec.bpe.fuse_unk = true;
  for (std::size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.types[i] != byte) continue;
    if (!is_byte_token(v.tokens[i]))
      return f.key_error(types_key, "token " + std::to_string(i) + " ('" + v.tokens[i] +
                                      "') has type byte but is not spelt <0xAB>");
    spec.bpe.byte_fallback = true;
  }
  // NOTE: without unknown_token_id, the first token of type unknown (as
  // SentencePiece has exactly one).
  std::optional<token_id> unk = v.unk;
  for (std::size_t i = 0; i < v.tokens.size() && !unk; ++i)
    if (v.types[i] == unknown) unk = static_cast<token_id>(i);
  if (unk) spec.bpe.unk_token = v.tokens[static_cast<std::size_t>(*unk)];
  spec.merges = merges_from_scores(v.tokens, *scores);

  auto prefix = optional_bool(f, "tokenizer.ggml.add_space_prefix", true);
  if (!prefix) return prefix.error();
  using nk = normalizer_step::kind;
  using dk = decoder_step::kind;
  auto normalizer = [&](nk what, std::string pattern, std::string content) {
    normalizer_step n;
    n.what = what;
    n.pattern = std::move(pattern);
    n.content = std::move(content);
    spec.normalizer.push_back(std::move(n));
  };
  auto decoder = [&](dk what, std::string pattern, std::string content) {
    decoder_step d;
    d.what = what;
    d.pattern = std::move(pattern);
    d.content = std::move(content);
    spec.decoder.push_back(std::move(d));
  };
  if (*prefix) normalizer(nk::prepend, "", "\u2581");
  normalizer(nk::replace, " ", "\u2581");
  decoder(dk::replace, "\u2581", " ");
  decoder(dk::byte_fallback, "", "");
  decoder(dk::fuse, "", "");
  if (*prefix) { // the space the prepended '▁' became, off the decoded text's start
    decoder(dk::strip, "", " ");
    spec.decoder.back().start = 1;
  }
  return {};
}

// Byte-level BPE with the stored merges and the split regex `pre` names;
// `bos_by_default`: whether the model's own tokenizer.json prepends BOS (Llama
// 3's and Mistral Nemo's do), for files without tokenizer.ggml.add_bos_token
// (llama.cpp reads them so too).
status byte_level(const gguf_file& f, const vocabulary& v, tokenizer_spec& spec,
                  bool& bos_by_default) {
  // NOTE: every text starts as the symbols of its bytes: a byte without one
  // would have no ids.
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    append_utf8(symbol, byte_to_symbol(static_cast<uint8_t>(b)));
    if (!v.ids.contains(symbol)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      return f.key_error(tokens_key, "no token for byte " + std::string(hex) + " ('" + symbol +
                                       "'), which byte-level BPE starts from");
    }
  }
  auto merges = f.string_array(merges_key);
  if (!merges) return merges.error();
  spec.merges.reserve(merges->size());
  for (std::size_t i = 0; i < merges->size(); ++i) {
    const std::string_view m = (*merges)[i];
    const auto sp = m.find(' ');
    const std::string which = "merge " + std::to_string(i) + " '" + std::string(m) + "'";
    if (sp == m.npos || sp == 0 || sp + 1 >= m.size() || m.find(' ', sp + 1) != m.npos)
      return f.key_error(merges_key, which + " is not two tokens separated by one space");
    std::string a(m.substr(0, sp)), b(m.substr(sp + 1));
    for (const std::string& t : {a, b, a + b})
      if (!v.ids.contains(t))
        return f.key_error(merges_key, which + " names '" + t + "', which is not a token");
    spec.merges.emplace_back(std::move(a), std::move(b));
  }
  // NOTE: a file without the key predates it; llama.cpp reads it as "default".
  std::string pre = "default";
  if (f.contains(pre_key)) {
    auto p = f.str(pre_key);
    if (!p) return p.error();
    pre = *p;
  }
  spec.bpe.byte_level = true;
  // NOTE: several names share one split, as in llama.cpp: Llama 3's under
  // its other names and Falcon3's (Llama models); Qwen2's for DeepSeek R1's
  // Qwen distillations.
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3" || pre == "falcon3") {
    spec.splits = {split_pattern::llama3};
    spec.bpe.ignore_merges = true; // as Llama 3's tokenizer.json says
    bos_by_default = true;
  } else if (pre == "qwen2") {
    spec.splits = {split_pattern::qwen2};
    // NOTE: Qwen2's tokenizer.json normalizes to NFC first; llama.cpp does
    // not, and would tokenize "e\u0301" differently from the model's own.
    spec.normalizer = {normalizer_step{}}; // NFC
  } else if (pre == "deepseek-r1-qwen") {
    spec.splits = {split_pattern::qwen2}; // without NFC, as llama.cpp reads it
  } else if (pre == "smollm") {
    // SmolLM's tokenizer.json: Digits (each digit alone), then GPT-2's split.
    spec.splits = {split_pattern::individual_digits, split_pattern::gpt2};
  } else if (pre == "tekken") {
    // Mistral Nemo's tokenizer.json: one Split regex, merges ignored.
    auto r = regex_split::compile(
      R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)"
      R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)"
      R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
    KVACTOR_ASSERT(r.has_value(), "the Tekken split compiles");
    spec.splits = {std::move(*r)};
    spec.bpe.ignore_merges = true;
    bos_by_default = true;
  } else if (pre == "gpt-2" || pre == "default") {
    spec.splits = {split_pattern::gpt2};
  } else {
    return f.key_error(pre_key, "unsupported pre-tokenizer '" + pre +
                                  "' (kvactor reads llama-bpe, llama3, llama-v3, falcon3, "
                                  "qwen2, deepseek-r1-qwen, smollm, tekken, gpt-2, default)");
  }
  return {};
}

} // namespace

result<tokenizer_spec> gguf_tokenizer_spec(const gguf_file& f) {
  auto model = f.str(model_key);
  if (!model) return model.error();
  if (*model != "llama" && *model != "gpt2")
    return f.key_error(model_key, "unsupported tokenizer model '" + *model +
                                    "' (kvactor reads llama and gpt2)");
  auto v = read_vocabulary(f);
  if (!v) return v.error();
  tokenizer_spec spec;
  add_tokens(*v, spec);
  const bool spm = *model == "llama";
  bool bos_by_default = spm;
  if (auto ok = spm ? sentencepiece(f, *v, spec) : byte_level(f, *v, spec, bos_by_default); !ok)
    return ok.error();
  if (auto ok = add_post_processor(f, *v, bos_by_default, spec); !ok) return ok.error();
  return spec;
}

result<tokenizer> gguf_tokenizer(const gguf_file& f) {
  auto spec = gguf_tokenizer_spec(f);
  if (!spec) return spec.error();
  return tokenizer::build(std::move(*spec), f.path().string());
}

result<std::optional<std::string>> gguf_chat_template(const gguf_file& f) {
  constexpr std::string_view key = "tokenizer.chat_template";
  if (!f.contains(key)) return std::optional<std::string>{};
  auto s = f.str(key);
  if (!s) return s.error();
  return std::optional<std::string>{std::move(*s)};
}

} // namespace kvactor::model
