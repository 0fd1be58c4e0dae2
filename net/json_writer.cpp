#include "net/json_writer.hpp"

#include "base/json.hpp"
#include "base/utf8.hpp"

#include <cmath>
#include <cstdio>

namespace kvactor::net {

void append_json_string(std::string& out, std::string_view s) {
  out += json::quote(replace_invalid_utf8(s));
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

namespace {

void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  out += buf;
}

template <class T, class Append>
void append_array(std::string& out, const std::vector<T>& values, Append append) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0)
      out += ',';
    append(out, values[i]);
  }
  out += ']';
}

} // namespace

json_writer& json_writer::field(std::string_view k, uint64_t value) {
  key(k);
  out_ += std::to_string(value);
  return *this;
}

json_writer& json_writer::field(std::string_view k, double value) {
  key(k);
  append_number(out_, value);
  return *this;
}

json_writer& json_writer::field(std::string_view k, const std::vector<double>& values) {
  key(k);
  append_array(out_, values, append_number);
  return *this;
}

json_writer& json_writer::field(std::string_view k, const std::vector<int64_t>& values) {
  key(k);
  append_array(out_, values, [](std::string& out, int64_t v) { out += std::to_string(v); });
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
  append_array(out_, values, [](std::string& out, int32_t v) { out += std::to_string(v); });
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
