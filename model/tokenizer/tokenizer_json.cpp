#include <simdjson.h>

#include "base/json.hpp"
#include "model/safetensors_writer.hpp"
#include "model/tokenizer/tokenizer_json_steps.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"

namespace kvactor::model {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

status parse_model(value v, tokenizer_spec& spec, std::string_view where) {
  simdjson::ondemand::object obj;
  if (v.get_object().get(obj)) return json::key_error(where, "model", "expected an object");
  std::string type = "BPE";
  bool has_vocab = false, has_merges = false;
  for (auto field : obj) {
    std::string_view k;
    if (auto err = field.unescaped_key().get(k)) return json::parse_error(where, err);
    const std::string key = "model." + std::string(k);
    value fv;
    if (auto err = field.value().get(fv)) return json::parse_error(where, err);
    if (json::is_null(fv)) continue;
    if (k == "type") {
      auto s = json::get_string(fv, where, key);
      if (!s) return s.error();
      type = *s;
    } else if (k == "vocab") {
      simdjson::ondemand::object vocab;
      if (fv.get_object().get(vocab)) return json::key_error(where, key, "expected an object");
      for (auto entry : vocab) {
        std::string_view token;
        if (auto err = entry.unescaped_key().get(token)) return json::parse_error(where, err);
        int64_t id = 0;
        if (entry.value().get_int64().get(id) || id < 0 || id > INT32_MAX)
          return json::key_error(where, key, "token '" + std::string(token) + "' has no valid id");
        spec.vocab.emplace_back(std::string(token), static_cast<token_id>(id));
      }
      has_vocab = true;
    } else if (k == "merges") {
      simdjson::ondemand::array merges;
      if (fv.get_array().get(merges)) return json::key_error(where, key, "expected a list");
      for (auto elem : merges) {
        value mv;
        if (auto err = elem.get(mv)) return json::parse_error(where, err);
        json_type t;
        if (auto err = mv.type().get(t)) return json::parse_error(where, err);
        const std::string which = key + "[" + std::to_string(spec.merges.size()) + "]";
        if (t == json_type::string) {
          // Older form: "a b" (symbols never contain a space).
          std::string_view s;
          if (auto err = mv.get_string().get(s)) return json::parse_error(where, err);
          const auto sp = s.find(' ');
          if (sp == std::string_view::npos || sp == 0 || sp + 1 >= s.size() ||
              s.find(' ', sp + 1) != s.npos)
            return json::key_error(
              where, which, "'" + std::string(s) + "' is not two symbols separated by one space");
          spec.merges.emplace_back(std::string(s.substr(0, sp)), std::string(s.substr(sp + 1)));
        } else if (t == json_type::array) {
          std::vector<std::string> parts;
          simdjson::ondemand::array pair;
          if (auto err = mv.get_array().get(pair)) return json::parse_error(where, err);
          for (auto p : pair) {
            std::string_view s;
            if (p.get_string().get(s)) return json::key_error(where, which, "expected two strings");
            parts.emplace_back(s);
          }
          if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
            return json::key_error(where, which, "expected two non-empty strings");
          spec.merges.emplace_back(std::move(parts[0]), std::move(parts[1]));
        } else {
          return json::key_error(where, which, "expected \"a b\" or [\"a\", \"b\"]");
        }
      }
      has_merges = true;
    } else if (k == "unk_token") {
      auto s = json::get_string(fv, where, key);
      if (!s) return s.error();
      spec.bpe.unk_token = *s;
    } else if (k == "ignore_merges" || k == "byte_fallback" || k == "fuse_unk") {
      auto b = json::get_bool(fv, where, key);
      if (!b) return b.error();
      (k == "ignore_merges" ? spec.bpe.ignore_merges
       : k == "byte_fallback" ? spec.bpe.byte_fallback
                              : spec.bpe.fuse_unk) = *b;
    } else if (k == "continuing_subword_prefix" || k == "end_of_word_suffix") {
      auto s = json::get_string(fv, where, key);
      if (!s) return s.error();
      if (!s->empty()) return json::key_error(where, key, "is not supported");
    } else if (k == "dropout") {
      auto d = json::get_number(fv, where, key);
      if (!d) return d.error();
      if (*d != 0) return json::key_error(where, key, "BPE dropout is not supported in serving");
    }
  }
  if (type != "BPE")
    return json::key_error(where, "model.type",
                           "unsupported model type '" + type + "' (kvactor loads BPE)");
  if (!has_vocab) return json::key_error(where, "model.vocab", "missing");
  if (!has_merges) return json::key_error(where, "model.merges", "missing");
  return {};
}

status parse_added_tokens(value v, tokenizer_spec& spec, std::string_view where) {
  simdjson::ondemand::array arr;
  if (v.get_array().get(arr)) return json::key_error(where, "added_tokens", "expected a list");
  for (auto elem : arr) {
    simdjson::ondemand::object obj;
    if (elem.get_object().get(obj))
      return json::key_error(where, "added_tokens", "entries must be objects");
    added_token t;
    bool has_id = false, has_content = false;
    for (auto field : obj) {
      std::string_view k;
      if (auto err = field.unescaped_key().get(k)) return json::parse_error(where, err);
      const std::string key = "added_tokens." + std::string(k);
      value fv;
      if (auto err = field.value().get(fv)) return json::parse_error(where, err);
      if (k == "id") {
        auto id = json::get_int(fv, where, key);
        if (!id) return id.error();
        if (*id < 0 || *id > INT32_MAX) return json::key_error(where, key, "out of range");
        t.id = static_cast<token_id>(*id);
        has_id = true;
      } else if (k == "content") {
        auto s = json::get_string(fv, where, key);
        if (!s) return s.error();
        t.content = *s;
        has_content = true;
      } else if (k == "special" || k == "lstrip" || k == "rstrip") {
        auto b = json::get_bool(fv, where, key);
        if (!b) return b.error();
        (k == "special" ? t.special : k == "lstrip" ? t.lstrip : t.rstrip) = *b;
      }
    }
    if (!has_id || !has_content || t.content.empty())
      return json::key_error(where, "added_tokens",
                             "every entry needs an 'id' and a non-empty 'content'");
    spec.added_tokens.push_back(std::move(t));
  }
  return {};
}

} // namespace

result<tokenizer_spec> parse_tokenizer_json(std::string_view json_text, std::string_view where) {
  const simdjson::padded_string padded(json_text);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(padded).get(doc)) return json::parse_error(where, err);
  simdjson::ondemand::object obj;
  if (auto err = doc.get_object().get(obj)) {
    if (err == simdjson::INCORRECT_TYPE) return error_in(where, "expected a JSON object");
    return json::parse_error(where, err);
  }
  tokenizer_spec spec;
  spec.bpe.byte_level = false; // until a ByteLevel pre-tokenizer says so
  bool has_model = false, has_decoder = false;
  for (auto field : obj) {
    std::string_view k;
    if (auto err = field.unescaped_key().get(k)) return json::parse_error(where, err);
    const std::string key(k);
    value v;
    if (auto err = field.value().get(v)) return json::parse_error(where, err);
    if (json::is_null(v)) continue;
    if (key == "model") {
      if (auto ok = parse_model(v, spec, where); !ok) return ok.error();
      has_model = true;
    } else if (key == "added_tokens") {
      if (auto ok = parse_added_tokens(v, spec, where); !ok) return ok.error();
    } else if (key == "normalizer" || key == "pre_tokenizer" || key == "post_processor" ||
               key == "decoder") {
      if (auto ok = parse_pipeline_section(v, key, spec, where); !ok) return ok.error();
      has_decoder |= key == "decoder";
    }
  }
  if (auto end = json::expect_end(doc, where); !end) return end.error();
  if (!has_model) return json::key_error(where, "model", "missing");
  if (!has_decoder && !spec.bpe.byte_level)
    return json::key_error(where, "decoder",
                           "missing (a tokenizer that is not byte-level needs one)");
  return spec;
}

std::string write_tokenizer_json(const tokenizer_spec& spec) {
  std::string s = "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
  s += "  \"added_tokens\": [";
  for (std::size_t i = 0; i < spec.added_tokens.size(); ++i) {
    const auto& t = spec.added_tokens[i];
    s += i ? ",\n    {" : "\n    {";
    s += "\"id\": " + std::to_string(t.id) + ", \"content\": ";
    s += json::quote(t.content);
    s += ", \"single_word\": false, \"lstrip\": ";
    s += t.lstrip ? "true" : "false";
    s += ", \"rstrip\": ";
    s += t.rstrip ? "true" : "false";
    s += ", \"normalized\": false, \"special\": ";
    s += t.special ? "true" : "false";
    s += "}";
  }
  s += "\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": {\"type\": \"Sequence\", "
       "\"pretokenizers\": [";
  for (const auto& step : spec.splits) {
    const auto* p = std::get_if<split_pattern>(&step);
    if (p && (*p == split_pattern::individual_digits || *p == split_pattern::digit_runs)) {
      s += "{\"type\": \"Digits\", \"individual_digits\": ";
      s += *p == split_pattern::individual_digits ? "true}, " : "false}, ";
      continue;
    }
    const regex_split* r = p ? nullptr : &std::get<regex_split>(step);
    const regex_split::options o = r ? r->settings() : regex_split::options{};
    s += "{\"type\": \"Split\", \"pattern\": {";
    s += o.literal ? "\"String\": " : "\"Regex\": ";
    s += json::quote(r ? r->pattern() : split_pattern_regex(*p));
    s += "}, \"behavior\": ";
    s += json::quote(split_behavior_name(o.behavior));
    s += ", \"invert\": ";
    s += o.invert ? "true}, " : "false}, ";
  }
  s += "{\"type\": \"ByteLevel\", \"add_prefix_space\": ";
  s += spec.add_prefix_space ? "true" : "false";
  s += ", \"trim_offsets\": true, \"use_regex\": false}]},\n";
  s += "  \"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
       "\"trim_offsets\": false, "
       "\"use_regex\": true},\n";
  s +=
    "  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, "
    "\"use_regex\": true},\n";
  s += "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": ";
  s += spec.bpe.unk_token ? json::quote(*spec.bpe.unk_token) : std::string("null");
  s += ",\n    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n";
  s += "    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": ";
  s += spec.bpe.ignore_merges ? "true" : "false";
  s += ",\n    \"vocab\": {";
  for (std::size_t i = 0; i < spec.vocab.size(); ++i) {
    s += i ? ",\n      " : "\n      ";
    s += json::quote(spec.vocab[i].first);
    s += ": ";
    s += std::to_string(spec.vocab[i].second);
  }
  s += "\n    },\n    \"merges\": [";
  for (std::size_t i = 0; i < spec.merges.size(); ++i) {
    s += i ? ",\n      [" : "\n      [";
    s += json::quote(spec.merges[i].first);
    s += ", ";
    s += json::quote(spec.merges[i].second);
    s += "]";
  }
  s += "\n    ]\n  }\n}\n";
  return s;
}

} // namespace kvactor::model
