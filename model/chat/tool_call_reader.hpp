#pragma once
// Tool calls read while their text streams in: each call's name once its
// string has closed, and its arguments as they grow, compact (whitespace
// outside strings dropped, everything else as written). Fed the whole text
// of a call, the arguments are that call's arguments exactly; fed it piece by
// piece, they grow by the same characters, so a stream's argument fragments
// join to the arguments of the whole answer.
//
// It reads the calls' JSON objects ({"name": ..., "arguments" | "parameters":
// ...}) and skips whatever lies between them (hermes tags, json's ";"), so it
// serves both formats of tool_calls.hpp; whether the text is nothing but
// calls is parse_tool_calls's question, not this reader's.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

class tool_call_reader {
public:
  struct call {
    std::string name;      // decoded, once `named`
    bool named = false;    // the name's string has closed
    std::string arguments; // the value so far, compact
    bool closed = false;   // the call's object has closed
  };

  void feed(std::string_view text);
  // Every call begun so far, in the order they were written.
  const std::vector<call>& calls() const { return calls_; }

private:
  // Where a character at the call object's top level falls.
  enum class place : uint8_t { key_expected, key, colon_expected, value_expected, value };
  // What the value being read is kept as.
  enum class capture : uint8_t { none, name, arguments };

  void step(char ch);
  void top_level(char ch);
  void value(char ch); // a value's character outside its strings
  void close_call();
  void keep(char ch); // into the value's capture
  void string_closed();

  std::vector<call> calls_;
  int32_t depth_ = 0; // 0: between calls; 1: the call object's top level
  bool in_string_ = false, escaped_ = false;
  place place_ = place::key_expected;
  capture capture_ = capture::none;
  std::string key_;                               // the top-level key being read, as written
  std::string name_raw_;                          // the name's string literal, quotes included
  bool has_name_ = false, has_arguments_ = false; // the first of each key counts
};

} // namespace kvactor::model
