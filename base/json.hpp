#pragma once
// Small helpers around simdjson On-Demand shared by the config, safetensors
// header, index and tokenizer readers and writers (and net's JSON writer).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "base/result.hpp"

namespace kvactor::json {

// Reads a whole file into a padded buffer; errors name the file.
result<simdjson::padded_string> read_file(const std::filesystem::path& path);

// "<where>: invalid JSON (<simdjson message>)".
error parse_error(std::string_view where, simdjson::error_code code);

// "<where>: key '<key>': <what>".
error key_error(std::string_view where, std::string_view key, std::string_view what);

// Checks that nothing but whitespace follows the document's top-level value,
// which must have been consumed completely.
status expect_end(simdjson::ondemand::document& doc, std::string_view where);

// Reads an integer (an error for floats, strings, out-of-range values).
result<int64_t> get_int(simdjson::ondemand::value v, std::string_view where,
                             std::string_view key);
result<double> get_number(simdjson::ondemand::value v, std::string_view where,
                          std::string_view key);
result<bool> get_bool(simdjson::ondemand::value v, std::string_view where, std::string_view key);
result<std::string> get_string(simdjson::ondemand::value v, std::string_view where,
                               std::string_view key);

// `s` as a JSON string literal, quotes included.
std::string quote(std::string_view s);

// True when `v` is JSON null (then it has been consumed).
bool is_null(simdjson::ondemand::value& v);

} // namespace kvactor::json
