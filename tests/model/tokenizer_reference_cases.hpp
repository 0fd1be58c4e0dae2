#pragma once
// The checked-in reference cases of tests/model/tokenizer_reference/<family>.json
// (tools/tokenizer-reference/README.md): a text, Hugging Face's ids with and
// without the post-processor's special tokens, and its decodings.

#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/json.hpp"
#include "model/token_id.hpp"

namespace kvactor::model::test_support {

struct reference_case {
  std::string text;
  std::vector<token_id> with_special, without_special;
  std::string decoded, decoded_skip_special;
};

inline std::vector<reference_case> read_cases(const std::filesystem::path& file) {
  auto text = json::read_file(file);
  EXPECT_TRUE(text) << text.error().message;
  std::vector<reference_case> out;
  if (!text) return out;
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc = parser.iterate(*text);
  for (auto c : doc["cases"].get_array()) {
    reference_case r;
    auto read_ids = [](simdjson::ondemand::value v) {
      std::vector<token_id> v_out;
      for (auto id : v.get_array()) v_out.push_back(static_cast<token_id>(int64_t(id)));
      return v_out;
    };
    r.text = std::string(std::string_view(c["text"]));
    r.with_special = read_ids(c["ids"]);
    r.without_special = read_ids(c["ids_no_special"]);
    r.decoded = std::string(std::string_view(c["decoded"]));
    r.decoded_skip_special = std::string(std::string_view(c["decoded_skip_special"]));
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace kvactor::model::test_support
