#include "net/openai_fields.hpp"

#include "actors/requests/request_fields.hpp"
#include "net/openai_tools.hpp"

namespace kvactor::net {

namespace od = simdjson::ondemand;

namespace openai {

namespace {

// A message's content: a string, or an array of text parts (joined by
// newlines, as vLLM does).
std::variant<std::string, api_error> read_content(od::value v, const std::string& where) {
  std::string_view s;
  if (!v.get_string().get(s))
    return std::string(s);
  od::array parts;
  if (v.get_array().get(parts))
    return must_be(where, "a string or an array of text parts");
  std::string text;
  bool first = true;
  for (auto part : parts) {
    std::string_view type, piece;
    if (part["type"].get_string().get(type) || type != "text")
      return unsupported(where, "a content part other than text");
    if (part["text"].get_string().get(piece))
      return must_be(where, "text parts with a string text");
    if (!first)
      text += '\n';
    text += piece;
    first = false;
  }
  return text;
}

std::variant<std::vector<model::chat_message>, api_error> read_messages(od::value v) {
  od::array a;
  if (v.get_array().get(a))
    return must_be("messages", "an array of messages");
  std::vector<model::chat_message> out;
  for (auto item : a) {
    const std::string where = "messages[" + std::to_string(out.size()) + "]";
    od::object m;
    if (item.get_object().get(m))
      return must_be(where, "an object with role and content");
    model::chat_message msg;
    bool has_role = false;
    for (auto field : m) {
      std::string_view key;
      if (field.unescaped_key().get(key))
        return must_be(where, "an object with role and content");
      od::value value = field.value();
      if (key == "role") {
        std::string_view role;
        if (value.get_string().get(role))
          return must_be(where + ".role", "a string");
        // NOTE: "developer" is OpenAI's newer name for "system" (its o1 and
        // later models); the chat templates know "system" only.
        msg.role = role == "developer" ? "system" : std::string(role);
        has_role = true;
      } else if (key == "content") {
        bool null = false;
        if (!value.is_null().get(null) && null)
          continue;
        auto content = read_content(value, where + ".content");
        if (auto* e = std::get_if<api_error>(&content))
          return *e;
        msg.content = std::move(std::get<std::string>(content));
      } else if (key == "tool_calls") {
        bool null = false;
        if (!value.is_null().get(null) && null)
          continue;
        auto calls = read_tool_calls(value, where + ".tool_calls");
        if (auto* e = std::get_if<api_error>(&calls))
          return *e;
        msg.tool_calls_json = std::move(std::get<std::string>(calls));
      } else if (key == "tool_call_id") {
        std::string_view id;
        if (value.get_string().get(id))
          return must_be(where + ".tool_call_id", "a string");
        msg.tool_call_id = std::string(id);
      }
    }
    if (!has_role)
      return invalid(where + ".role", where + ".role is required");
    out.push_back(std::move(msg));
  }
  if (out.empty())
    return must_be("messages", "non-empty");
  return out;
}

} // namespace

bool is_chat_field(std::string_view key) {
  return key == "messages" || key == "logprobs" || key == "top_logprobs" || key == "tools" ||
         key == "tool_choice" || key == "parallel_tool_calls" || key == "chat_template_kwargs";
}

std::optional<api_error> read_chat_field(std::string_view key, od::value v, fields& f) {
  if (key == "messages") {
    auto m = read_messages(v);
    if (auto* e = std::get_if<api_error>(&m))
      return *e;
    f.messages = std::move(std::get<std::vector<model::chat_message>>(m));
  } else if (key == "logprobs") {
    if (v.is_null())
      return std::nullopt;
    if (v.get_bool().get(f.chat_logprobs))
      return must_be(key, "true or false");
  } else if (key == "top_logprobs") {
    int64_t n;
    if (v.is_null())
      return std::nullopt;
    if (v.get_int64().get(n))
      return must_be(key, "an integer");
    if (auto wrong = check_logprobs(n, key))
      return invalid(key, *wrong);
    f.chat_top_logprobs = static_cast<int32_t>(n);
  } else if (key == "tools") {
    return read_tools(v, f);
  } else if (key == "tool_choice") {
    return read_tool_choice(v, f);
  } else if (key == "parallel_tool_calls") {
    if (v.get_bool().get(f.parallel_tool_calls))
      return must_be(key, "true or false");
  } else if (key == "chat_template_kwargs") { // as vLLM: {"enable_thinking": false}
    od::object o;
    std::string_view raw;
    if (v.get_object().get(o) || o.raw_json().get(raw))
      return must_be(key, "an object");
    f.chat.template_kwargs = std::string(raw);
  }
  return std::nullopt;
}

} // namespace openai

std::variant<completion_request, api_error>
parse_chat_request(std::string_view body, uint64_t draw_seed, const model::chat_template& chat,
                   const model::sampling_defaults& defaults) {
  auto read = openai::read_body(body, draw_seed, true, defaults);
  if (auto* e = std::get_if<api_error>(&read))
    return *e;
  auto& f = std::get<openai::fields>(read);
  auto tools = openai::apply_tool_choice(f, chat.tool_format());
  if (auto* e = std::get_if<api_error>(&tools))
    return *e;
  auto prompt = chat.render(*f.messages, f.chat);
  if (!prompt)
    return openai::invalid("messages", prompt.error().message);
  f.prompts = openai::prompt_list{std::move(*prompt)};
  // NOTE: the end-of-turn token is the chat model's end; a checkpoint whose
  // config names only the base model's EOS would otherwise talk on.
  if (const auto eot = chat.end_of_turn(); !eot.empty())
    f.params.stop.emplace_back(eot);
  completion_request out = openai::request_of(f);
  out.tool_calls = std::get<std::optional<model::tool_call_format>>(tools);
  out.named_tool = f.named_tool && out.tool_calls.has_value();
  out.constrained_calls =
    out.tool_calls && f.params.constraint.kind == constraint_kind::tool_calls;
  return out;
}

} // namespace kvactor::net
