#include "net/json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace kvactor::net {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) { n = 2; cp = c & 0x1f; }
  else if ((c >> 4) == 0xe) { n = 3; cp = c & 0x0f; }
  else if ((c >> 3) == 0x1e) { n = 4; cp = c & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc >> 6) != 0x2) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid too.
  static constexpr uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

} // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
    ++i;
  }
  out += '"';
}

void json_writer::key(std::string_view k) {
  if (out_.size() > 1)
    out_ += ',';
  append_json_string(out_, k);
  out_ += ':';
}

json_writer& json_writer::field(std::string_view k, std::string_view value) {
  key(k);
  append_json_string(out_, value);
  return *this;
}

json_writer& json_writer::field(std::string_view k, int64_t value) {
  key(k);
  out_ += std::to_string(value);
  return *this;
}

json_writer& json_writer::field(std::string_view k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    out_ += "null";
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  out_ += buf;
  return *this;
}

json_writer& json_writer::field(std::string_view k, bool value) {
  key(k);
  out_ += value ? "true" : "false";
  return *this;
}

json_writer& json_writer::null_field(std::string_view k) {
  key(k);
  out_ += "null";
  return *this;
}

json_writer& json_writer::field(std::string_view k, const std::vector<int32_t>& values) {
  key(k);
  out_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0)
      out_ += ',';
    out_ += std::to_string(values[i]);
  }
  out_ += ']';
  return *this;
}

json_writer& json_writer::raw_field(std::string_view k, std::string_view json) {
  key(k);
  out_ += json;
  return *this;
}

json_writer& json_writer::object(std::string_view k, const json_writer& inner) {
  key(k);
  out_ += inner.str();
  return *this;
}

} // namespace kvactor::net
