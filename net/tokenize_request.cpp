#include "net/tokenize_request.hpp"

#include <simdjson.h>

#include <limits>

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
  simdjson::padded_string buffer(body);
  od::parser parser;
  od::document doc;
  od::object obj;
  auto err = parser.iterate(buffer).get(doc);
  if (!err)
    err = doc.get_object().get(obj);
  if (err)
    return api_error{400, err == simdjson::INCORRECT_TYPE
                            ? "the body must be one JSON object"
                            : std::string("invalid JSON: ") + simdjson::error_message(err)};
  tokenize_fields f;
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if ((err = field.unescaped_key().get(key)) || (err = field.value().get(v)))
      return api_error{400, std::string("invalid JSON: ") + simdjson::error_message(err)};
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
      if (v.get_array().get(a))
        return openai::must_be(key, "an array of token ids");
      std::vector<int32_t> ids;
      for (auto item : a) {
        int64_t t;
        if (item.get_int64().get(t) || t < 0 || t > std::numeric_limits<int32_t>::max())
          return openai::must_be(key, "an array of token ids");
        ids.push_back(static_cast<int32_t>(t));
      }
      f.tokens = std::move(ids);
    }
  }
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
    return api_error{400, "invalid JSON: trailing content after the object"};
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
