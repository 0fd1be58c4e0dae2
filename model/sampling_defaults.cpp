#include "model/sampling_defaults.hpp"

#include <limits>
#include <sstream>
#include <string>

#include "base/json.hpp"

namespace kvactor::model {
namespace {

using simdjson::ondemand::value;

// NOTE: the ranges are the runtime's (actors/requests/request_fields.cpp), stated
// again here because model/ does not see the request type: a default out of
// them would make every request that leaves the field out fail at admission,
// naming a field its sender never wrote.
struct number_key {
  std::string_view key;
  bool (*in_range)(double);
  std::string_view range;
  std::optional<float> sampling_defaults::*slot;
};

constexpr number_key number_keys[] = {
  {"temperature", [](double t) { return t >= 0 && t <= 1e6; }, "a number in [0, 1e6]",
   &sampling_defaults::temperature},
  {"top_p", [](double p) { return p > 0 && p <= 1; }, "a number in (0, 1]",
   &sampling_defaults::top_p},
  {"min_p", [](double p) { return p >= 0 && p <= 1; }, "a number in [0, 1]",
   &sampling_defaults::min_p},
  {"repetition_penalty",
   [](double p) { return p > 0 && p <= std::numeric_limits<float>::max(); }, "a number > 0",
   &sampling_defaults::repetition_penalty},
};

// "must be <range> (got <x>)", x as JSON would write it.
std::string must_be(std::string_view range, double x) {
  std::ostringstream out;
  out << "must be " << range << " (got " << x << ")";
  return out.str();
}

} // namespace

result<sampling_defaults> parse_sampling_defaults(std::string_view json_text,
                                                  std::string_view source) {
  simdjson::padded_string text(json_text);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(text).get(doc)) return json::parse_error(source, err);
  simdjson::ondemand::object obj;
  if (auto err = doc.get_object().get(obj)) {
    if (err == simdjson::INCORRECT_TYPE) return error_in(source, "expected a JSON object");
    return json::parse_error(source, err);
  }
  sampling_defaults d;
  bool greedy = false;
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return json::parse_error(source, err);
    value v;
    if (auto err = field.value().get(v)) return json::parse_error(source, err);
    if (json::is_null(v)) continue; // transformers writes null for "not set"
    bool done = false;
    for (const number_key& k : number_keys) {
      if (key != k.key) continue;
      auto x = json::get_number(v, source, key);
      if (!x) return x.error();
      if (!k.in_range(*x)) return json::key_error(source, key, must_be(k.range, *x));
      d.*k.slot = static_cast<float>(*x);
      done = true;
    }
    if (done) continue;
    if (key == "top_k") {
      auto k = json::get_int(v, source, key);
      if (!k) return k.error();
      if (*k < -1 || *k > std::numeric_limits<int32_t>::max())
        return json::key_error(source, key, must_be("an integer >= -1", double(*k)));
      d.top_k = static_cast<int32_t>(*k);
    } else if (key == "do_sample") {
      auto b = json::get_bool(v, source, key);
      if (!b) return b.error();
      greedy = !*b;
    }
  }
  if (auto ok = json::expect_end(doc, source); !ok) return ok.error();
  // NOTE: do_sample false is greedy decoding in transformers whatever the
  // temperature says (it warns about one set beside it).
  if (greedy) d.temperature = 0.0f;
  return d;
}

result<sampling_defaults> load_sampling_defaults(const std::filesystem::path& model_dir) {
  const auto file = model_dir / "generation_config.json";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return sampling_defaults{};
  auto text = json::read_file(file);
  if (!text) return text.error();
  return parse_sampling_defaults(std::string_view(text->data(), text->size()), file.string());
}

std::string to_string(const sampling_defaults& d) {
  std::ostringstream out;
  const char* sep = "";
  auto add = [&](std::string_view key, const auto& value) {
    if (value) {
      out << sep << key << " " << *value;
      sep = ", ";
    }
  };
  add("temperature", d.temperature);
  add("top_p", d.top_p);
  add("top_k", d.top_k);
  add("min_p", d.min_p);
  add("repetition_penalty", d.repetition_penalty);
  return out.str();
}

} // namespace kvactor::model
