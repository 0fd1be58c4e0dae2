#include "net/json_writer.hpp"

#include "model/json_util.hpp"
#include "model/tokenizer/unicode.hpp"

#include <cmath>
#include <cstdio>

namespace kvactor::net {

void append_json_string(std::string& out, std::string_view s) {
  out += model::json::quote(model::replace_invalid_utf8(s));
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

json_writer& json_writer::field(std::string_view k, const std::vector<std::string>& values) {
  key(k);
  out_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0)
      out_ += ',';
    append_json_string(out_, values[i]);
  }
  out_ += ']';
  return *this;
}

json_writer& json_writer::field(std::string_view k, const std::vector<json_writer>& objects) {
  key(k);
  out_ += '[';
  for (size_t i = 0; i < objects.size(); ++i) {
    if (i > 0)
      out_ += ',';
    out_ += objects[i].str();
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
