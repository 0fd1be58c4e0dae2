#include "model/tokenizer/tokenizer_json_steps.hpp"

#include <map>

#include "base/json.hpp"

namespace kvactor::model {
namespace {

using simdjson::ondemand::value;

// A component of a pipeline section: the fields kvactor looks at, read in
// whatever order the file has them.
struct node {
  std::string type;
  std::map<std::string, bool> flags;     // add_prefix_space, use_regex, split, ...
  std::map<std::string, std::string> strings; // behavior, content, prepend, ...
  std::map<std::string, int64_t> numbers; // start, stop
  std::optional<std::string> regex, string_pattern;
  std::vector<node> children; // pretokenizers / decoders / normalizers / processors
  // TemplateProcessing: "single" as names ("$A" for the text), and the ids
  // of each special token name.
  std::vector<std::string> single;
  std::map<std::string, std::vector<token_id>> special_tokens;

  bool flag(const std::string& k, bool otherwise) const {
    auto it = flags.find(k);
    return it == flags.end() ? otherwise : it->second;
  }
  std::string string(const std::string& k, std::string otherwise = {}) const {
    auto it = strings.find(k);
    return it == strings.end() ? otherwise : it->second;
  }
};

result<node> parse_node(value v, std::string_view where, const std::string& key);

status parse_children(value v, node& n, std::string_view where, const std::string& key) {
  simdjson::ondemand::array arr;
  if (v.get_array().get(arr)) return json::key_error(where, key, "expected a list");
  for (auto elem : arr) {
    value ev;
    if (auto err = elem.get(ev)) return json::parse_error(where, err);
    auto child = parse_node(ev, where, key);
    if (!child) return child.error();
    n.children.push_back(std::move(*child));
  }
  return {};
}

// {"Regex": "..."} or {"String": "..."}
status parse_pattern(value v, node& n, std::string_view where, const std::string& key) {
  simdjson::ondemand::object pat;
  if (v.get_object().get(pat)) return json::key_error(where, key, "expected an object");
  for (auto pf : pat) {
    std::string_view pk;
    if (auto err = pf.unescaped_key().get(pk)) return json::parse_error(where, err);
    value pv;
    if (auto err = pf.value().get(pv)) return json::parse_error(where, err);
    auto s = json::get_string(pv, where, key + "." + std::string(pk));
    if (!s) return s.error();
    if (pk == "Regex") n.regex = *s;
    if (pk == "String") n.string_pattern = *s;
  }
  return {};
}

// "single": [{"SpecialToken": {"id": "<s>", ...}}, {"Sequence": {"id": "A", ...}}]
status parse_single(value v, node& n, std::string_view where, const std::string& key) {
  simdjson::ondemand::array arr;
  if (v.get_array().get(arr)) return json::key_error(where, key, "expected a list");
  for (auto elem : arr) {
    simdjson::ondemand::object item;
    if (elem.get_object().get(item)) return json::key_error(where, key, "expected objects");
    for (auto f : item) {
      std::string_view kind;
      if (auto err = f.unescaped_key().get(kind)) return json::parse_error(where, err);
      simdjson::ondemand::object body;
      if (f.value().get_object().get(body))
        return json::key_error(where, key, "expected {\"" + std::string(kind) + "\": {...}}");
      std::string_view id;
      if (body.find_field_unordered("id").get_string().get(id))
        return json::key_error(where, key, "an item has no string 'id'");
      if (kind == "Sequence") {
        if (id != "A")
          return json::key_error(where, key, "the single template names sequence '" +
                                               std::string(id) + "' (only A is a text)");
        n.single.push_back("$A");
      } else if (kind == "SpecialToken") {
        n.single.emplace_back(id);
      } else {
        return json::key_error(where, key, "unknown item '" + std::string(kind) + "'");
      }
    }
  }
  return {};
}

// "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}
status parse_special_tokens(value v, node& n, std::string_view where, const std::string& key) {
  simdjson::ondemand::object obj;
  if (v.get_object().get(obj)) return json::key_error(where, key, "expected an object");
  for (auto f : obj) {
    std::string_view name;
    if (auto err = f.unescaped_key().get(name)) return json::parse_error(where, err);
    const std::string sub = key + "." + std::string(name);
    simdjson::ondemand::object body;
    if (f.value().get_object().get(body)) return json::key_error(where, sub, "expected an object");
    simdjson::ondemand::array ids;
    if (body.find_field_unordered("ids").get_array().get(ids))
      return json::key_error(where, sub, "has no list 'ids'");
    auto& out = n.special_tokens[std::string(name)];
    for (auto id : ids) {
      int64_t i = 0;
      if (id.get_int64().get(i) || i < 0 || i > INT32_MAX)
        return json::key_error(where, sub + ".ids", "expected token ids");
      out.push_back(static_cast<token_id>(i));
    }
  }
  return {};
}

result<node> parse_node(value v, std::string_view where, const std::string& key) {
  node n;
  simdjson::ondemand::object obj;
  if (v.get_object().get(obj)) return json::key_error(where, key, "expected an object or null");
  for (auto field : obj) {
    std::string_view k;
    if (auto err = field.unescaped_key().get(k)) return json::parse_error(where, err);
    const std::string name(k), sub = key + "." + name;
    value fv;
    if (auto err = field.value().get(fv)) return json::parse_error(where, err);
    if (json::is_null(fv)) continue;
    status ok;
    if (k == "type") {
      auto s = json::get_string(fv, where, sub);
      if (!s) return s.error();
      n.type = *s;
    } else if (k == "add_prefix_space" || k == "use_regex" || k == "invert" ||
               k == "individual_digits" || k == "split" || k == "strip_left" ||
               k == "strip_right") {
      auto b = json::get_bool(fv, where, sub);
      if (!b) return b.error();
      n.flags[name] = *b;
    } else if (k == "behavior" || k == "content" || k == "prepend" || k == "replacement" ||
               k == "prepend_scheme") {
      auto s = json::get_string(fv, where, sub);
      if (!s) return s.error();
      n.strings[name] = *s;
    } else if (k == "start" || k == "stop") {
      auto i = json::get_int(fv, where, sub);
      if (!i) return i.error();
      if (*i < 0 || *i > 1000) return json::key_error(where, sub, "out of range");
      n.numbers[name] = *i;
    } else if (k == "pattern") {
      ok = parse_pattern(fv, n, where, sub);
    } else if (k == "pretokenizers" || k == "decoders" || k == "normalizers" ||
               k == "processors") {
      ok = parse_children(fv, n, where, sub);
    } else if (k == "single") {
      ok = parse_single(fv, n, where, sub);
    } else if (k == "special_tokens") {
      ok = parse_special_tokens(fv, n, where, sub);
    }
    if (!ok) return ok.error();
  }
  if (n.type.empty()) return json::key_error(where, key, "has no 'type'");
  return n;
}

error unsupported(std::string_view where, std::string_view key, std::string_view what,
                  const std::string& type) {
  return json::key_error(where, key, "unsupported " + std::string(what) + " '" + type + "'");
}

// The literal a Replace matches; a regex is refused.
result<std::string> literal_pattern(const node& n, std::string_view where, std::string_view key) {
  if (n.string_pattern) return *n.string_pattern;
  return json::key_error(where, key,
                         n.regex ? "Replace with the regex '" + *n.regex + "' is not supported"
                                 : std::string("Replace has no 'pattern'"));
}

result<metaspace::prepend> prepend_scheme(const node& n, std::string_view where,
                                          std::string_view key) {
  const auto scheme = n.string("prepend_scheme");
  if (scheme.empty()) // older files: add_prefix_space
    return n.flag("add_prefix_space", true) ? metaspace::prepend::always
                                            : metaspace::prepend::never;
  if (scheme == "always") return metaspace::prepend::always;
  if (scheme == "first") return metaspace::prepend::first;
  if (scheme == "never") return metaspace::prepend::never;
  return json::key_error(where, key, "unknown Metaspace prepend_scheme '" + scheme + "'");
}

status apply_normalizer(const node& n, tokenizer_spec& spec, std::string_view where) {
  using k = normalizer_step::kind;
  if (n.type == "Sequence") {
    for (const auto& c : n.children)
      if (auto ok = apply_normalizer(c, spec, where); !ok) return ok;
    return {};
  }
  static const std::map<std::string, k> kinds = {
    {"NFC", k::nfc},         {"NFD", k::nfd},         {"NFKC", k::nfkc},
    {"NFKD", k::nfkd},       {"Lowercase", k::lowercase}, {"Replace", k::replace},
    {"Prepend", k::prepend}, {"Strip", k::strip}};
  const auto it = kinds.find(n.type);
  if (it == kinds.end()) return unsupported(where, "normalizer", "normalizer", n.type);
  normalizer_step step;
  step.what = it->second;
  if (step.what == k::replace) {
    auto pattern = literal_pattern(n, where, "normalizer");
    if (!pattern) return pattern.error();
    step.pattern = *pattern;
    step.content = n.string("content");
  } else if (step.what == k::prepend) {
    step.content = n.string("prepend");
  } else if (step.what == k::strip) {
    step.left = n.flag("strip_left", true);
    step.right = n.flag("strip_right", true);
  }
  spec.normalizer.push_back(std::move(step));
  return {};
}

status apply_pre_tokenizer(const node& n, tokenizer_spec& spec, bool& byte_level,
                           std::string_view where) {
  if (n.type == "Sequence") {
    for (const auto& c : n.children)
      if (auto ok = apply_pre_tokenizer(c, spec, byte_level, where); !ok) return ok;
    return {};
  }
  if (n.type == "ByteLevel") {
    byte_level = true;
    spec.add_prefix_space = n.flag("add_prefix_space", false);
    if (n.flag("use_regex", true)) spec.splits.push_back(split_pattern::gpt2);
    return {};
  }
  if (n.type == "Metaspace") {
    if (!spec.splits.empty() || byte_level)
      return json::key_error(where, "pre_tokenizer",
                             "Metaspace after other pre-tokenizers is not supported");
    auto scheme = prepend_scheme(n, where, "pre_tokenizer");
    if (!scheme) return scheme.error();
    spec.metaspace_split = metaspace{.replacement = n.string("replacement", "\u2581"),
                                     .prepend_scheme = *scheme,
                                     .split = n.flag("split", true)};
    return {};
  }
  if (n.type == "Digits") {
    spec.splits.push_back(n.flag("individual_digits", false) ? split_pattern::individual_digits
                                                             : split_pattern::digit_runs);
    return {};
  }
  if (n.type == "Split") {
    if (!n.regex && !n.string_pattern)
      return json::key_error(where, "pre_tokenizer", "Split without a 'Regex' or 'String' pattern");
    const std::string behavior = n.string("behavior");
    regex_split::options o;
    if (const auto b = split_behavior_of(behavior))
      o.behavior = *b;
    else
      return json::key_error(where, "pre_tokenizer", "unknown Split behavior '" + behavior + "'");
    o.invert = n.flag("invert", false);
    o.literal = !n.regex;
    // NOTE: the GPT-2, Llama 3 and Qwen2 patterns run by the hand-written
    // scanner, any other pattern by PCRE2 (with JIT as fast on Llama 3.1's
    // pattern: docs/model/tokenizer.md).
    const auto p = n.regex ? recognise_split_pattern(*n.regex) : std::nullopt;
    if (p && o.behavior == split_behavior::isolated && !o.invert) {
      spec.splits.push_back(*p);
      return {};
    }
    auto r = regex_split::compile(n.regex ? *n.regex : *n.string_pattern, o);
    if (!r)
      return json::key_error(where, "pre_tokenizer", "Split " + r.error().message);
    spec.splits.push_back(std::move(*r));
    return {};
  }
  return unsupported(where, "pre_tokenizer", "pre-tokenizer", n.type);
}

status apply_post_processor(const node& n, tokenizer_spec& spec, std::string_view where) {
  if (n.type == "Sequence") {
    for (const auto& c : n.children)
      if (auto ok = apply_post_processor(c, spec, where); !ok) return ok;
    return {};
  }
  if (n.type == "ByteLevel") return {}; // offsets only
  if (n.type != "TemplateProcessing")
    return unsupported(where, "post_processor", "post-processor", n.type);
  spec.prefix_ids.clear();
  spec.suffix_ids.clear();
  bool after_text = false;
  for (const auto& item : n.single) {
    if (item == "$A") {
      after_text = true;
      continue;
    }
    auto it = n.special_tokens.find(item);
    if (it == n.special_tokens.end())
      return json::key_error(where, "post_processor.special_tokens",
                             "has no entry for '" + item + "'");
    auto& out = after_text ? spec.suffix_ids : spec.prefix_ids;
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return {};
}

status apply_decoder(const node& n, tokenizer_spec& spec, std::string_view where) {
  using k = decoder_step::kind;
  if (n.type == "Sequence") {
    for (const auto& c : n.children)
      if (auto ok = apply_decoder(c, spec, where); !ok) return ok;
    return {};
  }
  static const std::map<std::string, k> kinds = {
    {"ByteLevel", k::byte_level}, {"ByteFallback", k::byte_fallback}, {"Fuse", k::fuse},
    {"Replace", k::replace},      {"Strip", k::strip},                {"Metaspace", k::metaspace}};
  const auto it = kinds.find(n.type);
  if (it == kinds.end()) return unsupported(where, "decoder", "decoder", n.type);
  decoder_step step;
  step.what = it->second;
  if (step.what == k::replace) {
    auto pattern = literal_pattern(n, where, "decoder");
    if (!pattern) return pattern.error();
    step.pattern = *pattern;
    step.content = n.string("content");
  } else if (step.what == k::strip) {
    const auto number = [&](const char* f) {
      auto i = n.numbers.find(f);
      return i == n.numbers.end() ? 0 : static_cast<int>(i->second);
    };
    step.content = n.string("content", " ");
    step.start = number("start");
    step.stop = number("stop");
  } else if (step.what == k::metaspace) {
    auto scheme = prepend_scheme(n, where, "decoder");
    if (!scheme) return scheme.error();
    step.replacement = n.string("replacement", "\u2581");
    step.prepend_scheme = *scheme;
  }
  spec.decoder.push_back(std::move(step));
  return {};
}

} // namespace

status parse_pipeline_section(value v, const std::string& key, tokenizer_spec& spec,
                              std::string_view where) {
  auto n = parse_node(v, where, key);
  if (!n) return n.error();
  if (key == "normalizer") return apply_normalizer(*n, spec, where);
  if (key == "post_processor") return apply_post_processor(*n, spec, where);
  if (key == "decoder") return apply_decoder(*n, spec, where);
  bool byte_level = false;
  if (auto ok = apply_pre_tokenizer(*n, spec, byte_level, where); !ok) return ok;
  spec.bpe.byte_level = byte_level;
  return {};
}

} // namespace kvactor::model
