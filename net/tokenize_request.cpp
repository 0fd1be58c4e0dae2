#include "net/tokenize_request.hpp"

#include <simdjson.h>

#include "base/utf8.hpp"
#include "net/json_writer.hpp"
#include "net/openai_fields.hpp"

namespace kvactor::net {

namespace od = simdjson::ondemand;

namespace {

struct tokenize_fields {
  std::optional<std::string> prompt;
  std::optional<bool> add_special_tokens;
  bool has_messages = false;
  std::optional<std::vector<int32_t>> tokens;
};

// Reads the fields both endpoints look at; the others (model, chat
// options) are left to their readers.
std::variant<tokenize_fields, api_error> read_fields(std::string_view body) {
  tokenize_fields f;
  auto problem = openai::read_object(body, [&](std::string_view key,
                                               od::value v) -> std::optional<api_error> {
    if (key == "prompt" || key == "content") {
      std::string_view s;
      if (v.get_string().get(s))
        return openai::must_be(key, "a string");
      if (!is_valid_utf8(s))
        return openai::invalid(key, std::string(key) + " is not valid UTF-8");
      f.prompt = std::string(s);
    } else if (key == "add_special_tokens" || key == "add_special") {
      bool b;
      if (v.get_bool().get(b))
        return openai::must_be(key, "true or false");
      f.add_special_tokens = b;
    } else if (key == "messages") {
      f.has_messages = true;
    } else if (key == "tokens") {
      od::array a;
      if (v.get_array().get(a) || !(f.tokens = openai::token_ids(a)))
        return openai::must_be(key, "an array of token ids");
    }
    return std::nullopt;
  });
  if (problem)
    return *problem;
  return f;
}

} // namespace

std::variant<std::string, api_error> answer_tokenize(std::string_view body,
                                                     const model::tokenizer& tok,
                                                     const model::chat_template& chat,
                                                     std::optional<int64_t> max_model_len) {
  auto read = read_fields(body);
  if (auto* e = std::get_if<api_error>(&read))
    return *e;
  auto& f = std::get<tokenize_fields>(read);
  if (f.prompt.has_value() == f.has_messages)
    return openai::invalid("prompt", "give either prompt or messages");
  std::string text;
  bool add_special = f.add_special_tokens.value_or(!f.has_messages);
  if (f.has_messages) {
    // The chat request's own reader renders the messages (and names the
    // field at fault); the sampling fields it also reads do not matter here.
    auto rendered = parse_chat_request(body, 0, chat);
    if (auto* e = std::get_if<api_error>(&rendered))
      return *e;
    text = std::move(std::get<completion_request>(rendered).prompts.front().prompt);
  } else {
    text = std::move(*f.prompt);
  }
  const auto ids = tok.encode(text, add_special);
  json_writer w;
  w.field("count", static_cast<int64_t>(ids.size()));
  if (max_model_len)
    w.field("max_model_len", *max_model_len);
  w.field("tokens", std::vector<int32_t>(ids.begin(), ids.end()));
  return w.str();
}

std::variant<std::string, api_error> answer_detokenize(std::string_view body,
                                                       const model::tokenizer& tok) {
  auto read = read_fields(body);
  if (auto* e = std::get_if<api_error>(&read))
    return *e;
  auto& f = std::get<tokenize_fields>(read);
  if (!f.tokens)
    return openai::invalid("tokens", "tokens is required");
  for (int32_t t : *f.tokens)
    if (static_cast<size_t>(t) >= tok.vocab_size())
      return openai::invalid("tokens", "token id " + std::to_string(t) +
                                         " is outside the vocabulary [0, " +
                                         std::to_string(tok.vocab_size()) + ")");
  const std::string text = tok.decode(*f.tokens);
  return json_writer().field("prompt", text).field("content", text).str();
}

} // namespace kvactor::net
