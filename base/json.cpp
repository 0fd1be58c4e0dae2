#include "base/json.hpp"

#include <cstdio>

#include <fstream>
#include <sstream>

namespace kvactor::json {

result<simdjson::padded_string> read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return error_in(path.string(), "file not found");
  simdjson::padded_string buf;
  if (auto err = simdjson::padded_string::load(path.string()).get(buf))
    return error_in(path.string(), std::string("cannot read: ") + simdjson::error_message(err));
  return buf;
}

error parse_error(std::string_view where, simdjson::error_code code) {
  return error_in(where, std::string("invalid JSON (") + simdjson::error_message(code) + ")");
}

error key_error(std::string_view where, std::string_view key, std::string_view what) {
  std::string m = "key '";
  m += key;
  m += "': ";
  m += what;
  return error_in(where, m);
}

status expect_end(simdjson::ondemand::document& doc, std::string_view where) {
  // NOTE: simdjson 3.0.1 has no at_end(); after the top-level value has been
  // consumed, current_location() fails with OUT_OF_BOUNDS exactly when only
  // whitespace remains.
  const char* loc = nullptr;
  auto err = doc.current_location().get(loc);
  if (err == simdjson::OUT_OF_BOUNDS) return {};
  return error_in(where, "invalid JSON (trailing content after the top-level value)");
}

result<int64_t> get_int(simdjson::ondemand::value v, std::string_view where,
                             std::string_view key) {
  int64_t out = 0;
  if (auto err = v.get_int64().get(out)) {
    if (err == simdjson::NUMBER_OUT_OF_RANGE) return key_error(where, key, "integer out of range");
    return key_error(where, key, "expected an integer");
  }
  return out;
}

result<double> get_number(simdjson::ondemand::value v, std::string_view where,
                          std::string_view key) {
  double out = 0;
  if (v.get_double().get(out)) return key_error(where, key, "expected a number");
  return out;
}

result<bool> get_bool(simdjson::ondemand::value v, std::string_view where, std::string_view key) {
  bool out = false;
  if (v.get_bool().get(out)) return key_error(where, key, "expected true or false");
  return out;
}

result<std::string> get_string(simdjson::ondemand::value v, std::string_view where,
                               std::string_view key) {
  std::string_view out;
  if (v.get_string().get(out)) return key_error(where, key, "expected a string");
  return std::string(out);
}

bool is_null(simdjson::ondemand::value& v) {
  bool null = false;
  return !v.is_null().get(null) && null;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

} // namespace kvactor::json
