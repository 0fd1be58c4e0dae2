#include "model/chat/tool_call_reader.hpp"

#include <simdjson.h>

namespace kvactor::model {

namespace {

bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

} // namespace

void tool_call_reader::feed(std::string_view text) {
  for (char ch : text)
    step(ch);
}

void tool_call_reader::step(char ch) {
  if (depth_ == 0) { // between calls: only an object's opening counts
    if (ch == '{') {
      calls_.emplace_back();
      depth_ = 1;
      place_ = place::key_expected;
      has_name_ = has_arguments_ = false;
    }
    return;
  }
  if (in_string_) {
    const bool closes = ch == '"' && !escaped_;
    if (place_ != place::key)
      keep(ch);
    else if (!closes)
      key_ += ch;
    escaped_ = !escaped_ && ch == '\\';
    if (closes) {
      in_string_ = false;
      string_closed();
    }
    return;
  }
  if (depth_ > 1) // inside an object or array value
    value(ch);
  else
    top_level(ch);
}

void tool_call_reader::value(char ch) {
  if (!is_space(ch))
    keep(ch);
  if (ch == '"')
    in_string_ = true;
  else if (ch == '{' || ch == '[')
    ++depth_;
  else if ((ch == '}' || ch == ']') && depth_ > 1) // the call's own '}' is top_level's
    --depth_;
}

void tool_call_reader::close_call() {
  calls_.back().closed = true;
  depth_ = 0;
}

void tool_call_reader::top_level(char ch) {
  switch (place_) {
    case place::key_expected:
      if (ch == '"') {
        in_string_ = true;
        place_ = place::key;
        key_.clear();
      } else if (ch == '}') {
        close_call();
      }
      return;
    case place::key: return; // read as a string, in step()
    case place::colon_expected:
      if (ch == ':')
        place_ = place::value_expected;
      return;
    case place::value_expected:
      if (is_space(ch))
        return;
      place_ = place::value;
      capture_ = capture::none;
      if (key_ == "name" && !has_name_) {
        capture_ = capture::name;
        has_name_ = true;
        name_raw_.clear();
      } else if ((key_ == "arguments" || key_ == "parameters") && !has_arguments_) {
        capture_ = capture::arguments;
        has_arguments_ = true;
      }
      [[fallthrough]];
    case place::value:
      if (ch == ',' || ch == '}') {
        capture_ = capture::none;
        place_ = place::key_expected;
        if (ch == '}')
          close_call();
        return;
      }
      value(ch);
      return;
  }
}

void tool_call_reader::keep(char ch) {
  if (capture_ == capture::name)
    name_raw_ += ch;
  else if (capture_ == capture::arguments)
    calls_.back().arguments += ch;
}

void tool_call_reader::string_closed() {
  if (place_ == place::key) {
    place_ = place::colon_expected;
    return;
  }
  if (capture_ != capture::name || depth_ != 1)
    return;
  // NOTE: the literal is decoded as JSON decodes it (escapes, \u pairs).
  simdjson::dom::parser parser;
  std::string_view name;
  if (!parser.parse(simdjson::padded_string(name_raw_)).get(name)) {
    calls_.back().name = std::string(name);
    calls_.back().named = true;
  }
}

} // namespace kvactor::model
