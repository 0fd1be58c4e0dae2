#pragma once
// json_writer: builds one JSON object on one line. Strings are escaped and
// invalid UTF-8 (a model can emit a lone piece of a character) becomes
// U+FFFD, so every line the server writes is valid JSON.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::net {

class json_writer {
public:
  json_writer() : out_("{") {}

  json_writer& field(std::string_view key, std::string_view value);
  json_writer& field(std::string_view key, const char* value) {
    return field(key, std::string_view(value));
  }
  json_writer& field(std::string_view key, int64_t value);
  json_writer& field(std::string_view key, int32_t value) { return field(key, int64_t{value}); }
  json_writer& field(std::string_view key, uint64_t value);
  json_writer& field(std::string_view key, double value);
  json_writer& field(std::string_view key, bool value);
  json_writer& null_field(std::string_view key);
  json_writer& field(std::string_view key, const std::vector<int32_t>& values);
  json_writer& field(std::string_view key, const std::vector<int64_t>& values);
  // Numbers as field(key, double) writes them (non-finite ones as null).
  json_writer& field(std::string_view key, const std::vector<double>& values);
  json_writer& field(std::string_view key, const std::vector<std::string>& values);
  // An array of objects written by other writers.
  json_writer& field(std::string_view key, const std::vector<json_writer>& objects);
  // A value already in JSON.
  json_writer& raw_field(std::string_view key, std::string_view json);
  // A nested object written by another writer.
  json_writer& object(std::string_view key, const json_writer& inner);

  // The object, closed, with the line's '\n'.
  std::string line() const { return out_ + "}\n"; }
  std::string str() const { return out_ + "}"; }

private:
  void key(std::string_view k);
  std::string out_;
};

// Appends s as a JSON string literal.
void append_json_string(std::string& out, std::string_view s);

} // namespace kvactor::net
