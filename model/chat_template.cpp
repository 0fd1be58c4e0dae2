#include "model/chat_template.hpp"

#include "base/json.hpp"
#include "model/chat/tool_calls.hpp"

#include <fstream>

namespace kvactor::model {

namespace od = simdjson::ondemand;

namespace {

// The special tokens that apply_chat_template hands to a template.
bool is_special_token_key(std::string_view key) {
  return key == "bos_token" || key == "eos_token" || key == "unk_token" || key == "pad_token";
}

std::string_view trim_ascii(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string messages_json(const std::vector<chat_message>& messages) {
  std::string out = "[";
  for (const auto& m : messages) {
    if (out.size() > 1)
      out += ',';
    out += R"({"role":)";
    out += json::quote(m.role);
    out += R"(,"content":)";
    out += json::quote(m.content);
    if (!m.tool_calls_json.empty()) {
      out += R"(,"tool_calls":)";
      out += m.tool_calls_json;
    }
    if (!m.tool_call_id.empty()) {
      out += R"(,"tool_call_id":)";
      out += json::quote(m.tool_call_id);
    }
    out += '}';
  }
  out += ']';
  return out;
}

// What tokenizer_config.json says of the chat: its template and special tokens.
struct tokenizer_config_chat {
  std::optional<std::string> text;
  std::map<std::string, std::string> special_tokens;
};

// `with_template` false: the special tokens only (a template given instead).
result<tokenizer_config_chat> read_tokenizer_config(const std::filesystem::path& path,
                                                    bool with_template) {
  tokenizer_config_chat out;
  if (!std::filesystem::exists(path))
    return out;
  auto buffer = json::read_file(path);
  if (!buffer)
    return buffer.error();
  const std::string where = path.string();
  od::parser parser;
  od::document doc;
  od::object obj;
  if (auto err = parser.iterate(*buffer).get(doc); err || (err = doc.get_object().get(obj)))
    return json::parse_error(where, err ? err : simdjson::INCORRECT_TYPE);
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key))
      return json::parse_error(where, err);
    od::value v = field.value();
    if (key == "chat_template") {
      if (!with_template || json::is_null(v))
        continue;
      std::string_view s;
      if (!v.get_string().get(s)) {
        out.text = std::string(s);
        continue;
      }
      // A list of named templates: the one named "default".
      od::array list;
      if (v.get_array().get(list))
        return json::key_error(where, key, "not a string or a list of named templates");
      for (auto item : list) {
        std::string_view name, body;
        if (item["name"].get_string().get(name) || item["template"].get_string().get(body))
          return json::key_error(where, key, "a list entry without a string name and template");
        if (name == "default")
          out.text = std::string(body);
      }
    } else if (is_special_token_key(key)) {
      if (json::is_null(v))
        continue;
      std::string_view s;
      if (!v.get_string().get(s) || !v["content"].get_string().get(s)) // a string or an AddedToken
        out.special_tokens.emplace(std::string(key), std::string(s));
      else
        return json::key_error(where, key, "not a string or a token object");
    }
  }
  return out;
}

} // namespace

result<chat_template> chat_template::from_text(std::string_view text,
                                               std::map<std::string, std::string> special_tokens) {
  auto compiled = jinja_template::compile(text);
  if (!compiled)
    return error_in("chat template", compiled.error().message);
  chat_template t;
  t.template_ = std::move(*compiled);
  t.tool_format_ = tool_call_format_of(text);
  for (const auto& [key, token] : special_tokens) {
    t.special_tokens_json_ += ',';
    t.special_tokens_json_ += json::quote(key);
    t.special_tokens_json_ += ':';
    t.special_tokens_json_ += json::quote(token);
  }
  // NOTE: the end of a turn is whatever the template writes after an
  // answer; a template that cannot render this probe ends turns with EOS.
  constexpr std::string_view probe = "kvactor-probe-answer";
  chat_options o;
  o.add_generation_prompt = false;
  if (auto r = t.render({{"user", "Hi"}, {"assistant", std::string(probe)}}, o)) {
    if (const size_t at = r->rfind(probe); at != std::string::npos)
      t.end_of_turn_ = trim_ascii(std::string_view(*r).substr(at + probe.size()));
  } else if (auto eos = special_tokens.find("eos_token"); eos != special_tokens.end()) {
    t.end_of_turn_ = eos->second;
  }
  return t;
}

result<chat_template> chat_template::from_file(const std::filesystem::path& file,
                                               std::map<std::string, std::string> special_tokens) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    return error_in(file.string(), "no such file");
  if (ec)
    return error_in(file.string(), ec.message());
  if (!std::filesystem::is_regular_file(status))
    return error_in(file.string(), "not a file");
  const auto size = std::filesystem::file_size(file, ec);
  if (ec)
    return error_in(file.string(), ec.message());
  if (size == 0)
    return error_in(file.string(), "is empty");
  std::string text(size, '\0');
  std::ifstream in(file, std::ios::binary);
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    return error_in(file.string(), "cannot be read");
  auto t = from_text(text, std::move(special_tokens));
  if (!t)
    return error_in(file.string(), t.error().message);
  return t;
}

result<chat_template> chat_template::load(const std::filesystem::path& dir,
                                          const std::filesystem::path& text_file) {
  auto config = read_tokenizer_config(dir / "tokenizer_config.json", text_file.empty());
  if (!config)
    return config.error();
  if (!text_file.empty())
    return from_file(text_file, std::move(config->special_tokens));
  // NOTE: as transformers: a chat_template.jinja file beside it wins.
  if (const auto file = dir / "chat_template.jinja"; std::filesystem::exists(file))
    return from_file(file, std::move(config->special_tokens));
  if (!config->text)
    return plain();
  auto t = from_text(*config->text, std::move(config->special_tokens));
  if (!t)
    return error_in((dir / "tokenizer_config.json").string(), t.error().message);
  return t;
}

namespace {

// An assistant's calls as a model without a template writes them (the
// json format of tool_calls.hpp), after its content.
std::string plain_calls(const chat_message& m) {
  std::string out = m.content;
  simdjson::dom::parser parser;
  simdjson::dom::array calls;
  if (parser.parse(m.tool_calls_json).get(calls))
    return out;
  for (simdjson::dom::element call : calls) {
    std::string_view name;
    simdjson::dom::element arguments;
    if (call["function"]["name"].get(name) || call["function"]["arguments"].get(arguments))
      continue;
    out += out.empty() ? "" : "; ";
    out += "{\"name\": " + json::quote(name) + ", \"parameters\": ";
    out += simdjson::minify(arguments) + "}";
  }
  return out;
}

} // namespace

result<std::string> chat_template::render(const std::vector<chat_message>& messages,
                                          const chat_options& options) const {
  if (messages.empty())
    return error_in("messages", "at least one message is required");
  if (!template_) {
    std::string out;
    for (const auto& m : messages)
      out += m.role + ": " + (m.tool_calls_json.empty() ? m.content : plain_calls(m)) + "\n";
    return out + "assistant:";
  }
  std::string context = R"({"messages":)";
  context += messages_json(messages);
  if (!options.tools_json.empty()) {
    context += R"(,"tools":)";
    context += options.tools_json;
  }
  context += R"(,"add_generation_prompt":)";
  context += options.add_generation_prompt ? "true" : "false";
  context += special_tokens_json_;
  context += '}';
  return template_->render(context, options.template_kwargs, options.now);
}

} // namespace kvactor::model
