#include "base/json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::HasSubstr;

// Each field of {"key": <json>} through one reader.
template <class Read>
auto read_field(std::string_view json, Read read) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string buf(std::string("{\"key\":") + std::string(json) + "}");
  auto doc = parser.iterate(buf);
  return read(doc["key"].value(), "x.json", "key");
}

TEST(json, reads_an_integer_and_names_the_key_of_anything_else) {
  auto ok = read_field("42", json::get_int);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 42);
  auto fraction = read_field("4.5", json::get_int);
  ASSERT_FALSE(fraction);
  EXPECT_EQ(fraction.error().message, "x.json: key 'key': expected an integer");
  auto huge = read_field("9223372036854775808", json::get_int); // 2^63
  ASSERT_FALSE(huge);
  EXPECT_THAT(huge.error().message, HasSubstr("x.json: key 'key': "));
  auto text = read_field("\"7\"", json::get_int);
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("expected an integer"));
}

TEST(json, reads_strings_bools_and_numbers) {
  EXPECT_EQ(*read_field("\"a\\nb\"", json::get_string), "a\nb");
  EXPECT_EQ(*read_field("true", json::get_bool), true);
  EXPECT_DOUBLE_EQ(*read_field("0.25", json::get_number), 0.25);
  EXPECT_FALSE(read_field("1", json::get_bool));
  EXPECT_FALSE(read_field("null", json::get_string));
}

TEST(json, quotes_with_escapes) {
  EXPECT_EQ(json::quote("plain"), "\"plain\"");
  EXPECT_EQ(json::quote("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(json::quote(std::string_view("\x01", 1)), "\"\\u0001\"");
}

} // namespace
} // namespace kvactor
