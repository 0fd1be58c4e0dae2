#include "model/chat_template.hpp"

#include "base/json.hpp"
#include "model/tokenizer/unicode.hpp"

#include <ctime>

namespace kvactor::model {

namespace od = simdjson::ondemand;

namespace {

bool contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

// Python's str.isspace(): White_Space and the separators U+001C..U+001F.
bool python_space(uint32_t cp) {
  return is_whitespace(cp) || (cp >= 0x1c && cp <= 0x1f);
}

// Jinja's trim: Python's str.strip(), over characters (no-break and
// ideographic spaces included).
std::string_view trim(std::string_view s) {
  while (!s.empty()) {
    const auto c = decode_utf8(s, 0);
    if (!c.valid || !python_space(c.code_point))
      break;
    s.remove_prefix(c.length);
  }
  while (!s.empty()) {
    const auto c = decode_utf8_before(s, s.size());
    if (!c.valid || !python_space(c.code_point))
      break;
    s.remove_suffix(c.length);
  }
  return s;
}

std::string_view strip(std::string_view s, char c, bool left, bool right) {
  while (left && !s.empty() && s.front() == c)
    s.remove_prefix(1);
  while (right && !s.empty() && s.back() == c)
    s.remove_suffix(1);
  return s;
}

// A ChatML template's default system message: the literal in
// '<|im_start|>system\n…<|im_end|>' when the template writes one (Qwen2,
// Qwen2.5); "" when the system text comes from the messages.
std::string default_system(std::string_view text) {
  constexpr std::string_view open = "<|im_start|>system\\n";
  for (size_t pos = 0; (pos = text.find(open, pos)) != std::string_view::npos; pos += open.size()) {
    const size_t begin = pos + open.size();
    const size_t end = text.find("<|im_end|>", begin);
    if (end == std::string_view::npos)
      break;
    const std::string_view literal = text.substr(begin, end - begin);
    if (!literal.empty() && !contains(literal, "'") && !contains(literal, "\"") &&
        !contains(literal, "{"))
      return std::string(literal);
  }
  return {};
}

std::string render_llama(const std::vector<chat_message>& messages, std::string_view bos,
                         bool knowledge_header, std::string_view today) {
  std::string out(bos);
  size_t first = 0;
  if (knowledge_header) {
    std::string_view system;
    if (!messages.empty() && messages[0].role == "system") {
      system = trim(messages[0].content);
      first = 1;
    }
    out += "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December "
           "2023\nToday Date: ";
    out += today;
    out += "\n\n";
    out += system;
    out += "<|eot_id|>";
  }
  for (size_t i = first; i < messages.size(); ++i) {
    out += "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n";
    out += trim(messages[i].content);
    out += "<|eot_id|>";
  }
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

std::string render_chatml(const std::vector<chat_message>& messages, std::string_view default_sys) {
  std::string out;
  if (!default_sys.empty() && (messages.empty() || messages[0].role != "system"))
    out += "<|im_start|>system\n" + std::string(default_sys) + "<|im_end|>\n";
  for (const auto& m : messages)
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  return out + "<|im_start|>assistant\n";
}

// Qwen3: an answer keeps its reasoning only after the last user query
// (where the model is still thinking through the current question); a user
// message that is a whole <tool_response> is not a query.
std::string render_qwen3(const std::vector<chat_message>& messages, bool enable_thinking) {
  size_t last_query = messages.size() - 1;
  for (size_t i = messages.size(); i-- > 0;) {
    const std::string_view c = messages[i].content;
    const bool tool_response = c.starts_with("<tool_response>") && c.ends_with("</tool_response>");
    if (messages[i].role == "user" && !tool_response) {
      last_query = i;
      break;
    }
  }
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (m.role != "assistant") {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      continue;
    }
    std::string_view content = m.content, reasoning;
    if (const size_t end = content.find("</think>"); end != std::string_view::npos) {
      reasoning = strip(content.substr(0, end), '\n', false, true);
      if (const size_t open = reasoning.rfind("<think>"); open != std::string_view::npos)
        reasoning = reasoning.substr(open + 7);
      reasoning = strip(reasoning, '\n', true, false);
      content = strip(content.substr(content.rfind("</think>") + 8), '\n', true, false);
    }
    out += "<|im_start|>assistant\n";
    if (i > last_query && (i + 1 == messages.size() || !reasoning.empty())) {
      out += "<think>\n";
      out += strip(reasoning, '\n', true, true);
      out += "\n</think>\n\n";
      content = strip(content, '\n', true, false);
    }
    out += content;
    out += "<|im_end|>\n";
  }
  out += "<|im_start|>assistant\n";
  if (!enable_thinking)
    out += "<think>\n\n</think>\n\n";
  return out;
}

} // namespace

std::string_view to_string(chat_format f) {
  switch (f) {
  case chat_format::plain: return "plain";
  case chat_format::llama3: return "llama3";
  case chat_format::llama31: return "llama31";
  case chat_format::chatml: return "chatml";
  case chat_format::qwen3: return "qwen3";
  case chat_format::unsupported: return "unsupported";
  }
  return "unsupported";
}

chat_template chat_template::detect(const std::optional<std::string>& text, std::string bos_token) {
  chat_template t;
  t.bos_token_ = std::move(bos_token);
  if (!text)
    return t;
  if (contains(*text, "<|start_header_id|>") && contains(*text, "<|eot_id|>")) {
    t.format_ =
      contains(*text, "Cutting Knowledge Date") ? chat_format::llama31 : chat_format::llama3;
    t.dated_ = contains(*text, "strftime_now");
  } else if (contains(*text, "<|im_start|>") && contains(*text, "<|im_end|>")) {
    t.format_ = contains(*text, "<think>") ? chat_format::qwen3 : chat_format::chatml;
    if (t.format_ == chat_format::chatml)
      t.default_system_ = default_system(*text);
  } else {
    t.format_ = chat_format::unsupported;
  }
  return t;
}

result<chat_template> chat_template::load(const std::filesystem::path& dir) {
  const auto path = dir / "tokenizer_config.json";
  if (!std::filesystem::exists(path))
    return detect(std::nullopt);
  auto buffer = json::read_file(path);
  if (!buffer)
    return buffer.error();
  const std::string where = path.string();
  od::parser parser;
  od::document doc;
  od::object obj;
  if (auto err = parser.iterate(*buffer).get(doc); err || (err = doc.get_object().get(obj)))
    return json::parse_error(where, err ? err : simdjson::INCORRECT_TYPE);
  std::optional<std::string> text;
  std::string bos;
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key))
      return json::parse_error(where, err);
    od::value v = field.value();
    if (key == "chat_template") {
      if (json::is_null(v))
        continue;
      std::string_view s;
      if (!v.get_string().get(s)) {
        text = std::string(s);
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
          text = std::string(body);
      }
    } else if (key == "bos_token") {
      if (json::is_null(v))
        continue;
      std::string_view s;
      if (!v.get_string().get(s) || !v["content"].get_string().get(s)) // a string or an AddedToken
        bos = std::string(s);
      else
        return json::key_error(where, key, "not a string or a token object");
    }
  }
  return detect(text, std::move(bos));
}

result<std::string> chat_template::render(const std::vector<chat_message>& messages,
                                          const chat_options& options) const {
  if (format_ == chat_format::unsupported)
    return make_error("chat template",
                      "the model's template is not one kvactor renders (Llama 3, ChatML, Qwen3); "
                      "send a prompt rendered by the client to /v1/completions instead");
  if (messages.empty())
    return make_error("messages", "at least one message is required");
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant")
      return make_error("messages[" + std::to_string(i) + "].role",
                        "'" + role + "' is not one of system, user, assistant");
  }
  switch (format_) {
  case chat_format::llama3:
    return render_llama(messages, bos_token_, false, {});
  case chat_format::llama31:
    return render_llama(messages, bos_token_, true, dated_ ? options.today : "26 Jul 2024");
  case chat_format::chatml:
    return render_chatml(messages, default_system_);
  case chat_format::qwen3:
    return render_qwen3(messages, options.enable_thinking);
  case chat_format::plain:
  case chat_format::unsupported:
    break;
  }
  std::string out;
  for (const auto& m : messages)
    out += m.role + ": " + m.content + "\n";
  return out + "assistant:";
}

std::string_view chat_template::end_of_turn() const {
  switch (format_) {
  case chat_format::llama3:
  case chat_format::llama31: return "<|eot_id|>";
  case chat_format::chatml:
  case chat_format::qwen3: return "<|im_end|>";
  default: return "";
  }
}

std::string today_for_chat() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%d %b %Y", &tm);
  return buf;
}

} // namespace kvactor::model
