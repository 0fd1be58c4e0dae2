#include "tools/command_line.hpp"

#include <caf/config_value.hpp>
#include <caf/pec.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <vector>

namespace kvactor::tools {

namespace {

// NOTE: custom_options_ is protected; a pointer to it formed in a derived
// class reads it from any configuration, ours or a host application's.
struct option_access : caf::actor_system_config {
  static const caf::config_option_set& of(const caf::actor_system_config& cfg) {
    return cfg.*(&option_access::custom_options_);
  }
};

std::string_view view(caf::string_view s) {
  return {s.data(), s.size()};
}

// The option's name on a command line: global ones without their category.
std::string cli_name(const caf::config_option& o) {
  return std::string(view(o.category() == "global" ? o.long_name() : o.full_name()));
}

// The type an option takes, in words and as CAF names it.
std::string type_words(std::string_view type) {
  std::string words = "a value";
  if (type == "boolean")
    words = "true or false";
  else if (type.starts_with("uint"))
    words = "a non-negative integer";
  else if (type.starts_with("int"))
    words = "an integer";
  else if (type.starts_with("real"))
    words = "a number";
  else if (type == "string")
    words = "a string";
  else if (type == "atom")
    words = "an atom (up to 10 characters)";
  else if (type == "timespan")
    words = "a duration such as 200ms";
  else if (type.starts_with("list of"))
    words = "a list such as [a, b]";
  return words + " (" + std::string(type) + ")";
}

// A field of the dictionary CAF's parser errors carry ("argument", or
// "line" and "column" for a configuration file).
const caf::config_value* context_field(const caf::error& err, const std::string& key) {
  const caf::message& ctx = err.context();
  if (!ctx.match_elements<caf::config_value::dictionary>())
    return nullptr;
  const auto& fields = ctx.get_as<caf::config_value::dictionary>(0);
  auto i = fields.find(key);
  return i == fields.end() ? nullptr : &i->second;
}

std::string words_of(caf::pec code) {
  std::string s = caf::to_string(code);
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

struct argument {
  std::string name; // without dashes: "port", or one letter of a short option
  bool is_short = false;
  std::optional<std::string> value;
};

argument split(const std::string& arg) {
  argument a;
  if (arg.starts_with("--")) {
    const auto eq = arg.find('=');
    a.name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (eq != std::string::npos)
      a.value = arg.substr(eq + 1);
  } else if (arg.size() >= 2 && arg[0] == '-') {
    a.name = arg.substr(1, 1);
    a.is_short = true;
    if (arg.size() > 2)
      a.value = arg.substr(2);
  } else {
    a.name = arg;
  }
  return a;
}

std::string explain_argument(caf::pec code, const std::string& arg,
                             const caf::config_option_set& options) {
  const argument a = split(arg);
  const std::string shown = (a.is_short ? "-" : "--") + a.name;
  if (code == caf::pec::not_an_option) {
    std::string s = "unknown option " + arg;
    if (!a.is_short)
      if (auto near = nearest_option(options, a.name); !near.empty())
        s += " (did you mean --" + near + "?)";
    return s + "; --help lists the options";
  }
  const caf::config_option* o =
    a.is_short ? options.cli_short_name_lookup(a.name[0]) : options.cli_long_name_lookup(a.name);
  if (o == nullptr)
    return "bad argument " + arg + ": " + words_of(code);
  const std::string takes = type_words(view(o->type_name()));
  if (code == caf::pec::missing_argument || !a.value)
    return shown + " needs a value: " + shown + "=VALUE, " + takes;
  const std::string value = "\"" + *a.value + "\"";
  switch (code) {
    case caf::pec::integer_overflow:
    case caf::pec::integer_underflow:
    case caf::pec::exponent_overflow:
    case caf::pec::exponent_underflow:
      return "value out of range for " + shown + ": " + value + " does not fit " + takes;
    default: return "malformed value for " + shown + ": " + value + " is not " + takes;
  }
}

} // namespace

const caf::config_option_set& options_of(const caf::actor_system_config& cfg) {
  return option_access::of(cfg);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between a's first i and b's first j characters.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string nearest_option(const caf::config_option_set& options, std::string_view name) {
  // NOTE: near means at most a third of the name's characters wrong (at
  // least one, at most three); a category's options also match by their
  // long name alone (--cafile: --openssl.cafile).
  const size_t limit = std::clamp<size_t>(name.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const caf::config_option& o : options) {
    const std::string full = cli_name(o);
    const size_t d = std::min(edit_distance(name, full), edit_distance(name, view(o.long_name())));
    if (d < best_distance) {
      best = full;
      best_distance = d;
    }
  }
  return best;
}

std::string explain_parse_error(const caf::error& err, const caf::config_option_set& options,
                                std::string_view ini_file) {
  if (err.category() != caf::atom("parser"))
    return caf::actor_system_config::render(err);
  const auto code = static_cast<caf::pec>(err.code());
  if (const auto* arg = context_field(err, "argument"))
    if (const auto* s = caf::get_if<std::string>(arg))
      return explain_argument(code, *s, options);
  const auto* line = context_field(err, "line");
  const auto* column = context_field(err, "column");
  if (line != nullptr && column != nullptr)
    return std::string(ini_file.empty() ? "the configuration file" : ini_file) + ", line " +
           caf::to_string(*line) + ", column " + caf::to_string(*column) + ": " + words_of(code);
  return caf::actor_system_config::render(err);
}

bool parse_command_line(caf::actor_system_config& cfg, int argc, char** argv, std::string_view tool,
                        const char* ini_file) {
  const caf::error err = cfg.parse(argc, argv, ini_file);
  if (!err)
    return true;
  std::cerr << tool << ": " << explain_parse_error(err, options_of(cfg), ini_file ? ini_file : "")
            << "\n";
  return false;
}

} // namespace kvactor::tools
