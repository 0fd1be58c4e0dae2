#pragma once
// chat_template: a conversation rendered as the prompt a chat model was
// trained on. A checkpoint's template (chat_template.jinja, or
// tokenizer_config.json's chat_template: a string, or a list of named
// templates of which "default" is taken) is run by Jinja2 itself
// (chat/jinja_template.hpp) with the variables Hugging Face's
// apply_chat_template gives it:
//
//   messages               [{"role": …, "content": …}, …]
//   add_generation_prompt  true: end where the assistant's answer begins
//   bos_token, eos_token,  tokenizer_config.json's special tokens, as text
//   unk_token, pad_token
//   strftime_now(format)   today, for templates that print the date
//   raise_exception(text)  the template refuses the conversation: a 400
//   …                      the request's chat_template_kwargs, e.g.
//                          {"enable_thinking": false} for Qwen3
//
// A checkpoint without a template (a base model) gets the plain rendering
// "user: Hi\n…assistant:".

#include "base/result.hpp"
#include "model/chat/jinja_template.hpp"
#include "model/grammar/tool_call_grammar.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

struct chat_message {
  std::string role; // system, user, assistant, tool, or any role the template knows
  std::string content;
  // An assistant's calls, a JSON array as templates read them:
  // [{"id": ..., "type": "function", "function": {"name": ..., "arguments": {...}}}]
  // ("" none); a tool message's answer to call `tool_call_id`.
  std::string tool_calls_json{};
  std::string tool_call_id{};
};

struct chat_options {
  bool add_generation_prompt = true;
  // A JSON object of more variables for the template (a request's
  // chat_template_kwargs); the ones above and the messages win over it.
  std::string template_kwargs = "{}";
  // The request's tools, a JSON array ("" none): the template's `tools`.
  std::string tools_json{};
  std::optional<int64_t> now; // Unix seconds for strftime_now (none: the clock)
};

class chat_template {
public:
  // No template: the plain rendering.
  static chat_template plain() { return chat_template(); }
  // A template's text; `special_tokens` maps "bos_token" and the like to
  // their text. An error names the line of a syntax error.
  static result<chat_template> from_text(std::string_view text,
                                         std::map<std::string, std::string> special_tokens = {});
  // A template file's text, compiled; errors name the file.
  static result<chat_template> from_file(const std::filesystem::path& file,
                                         std::map<std::string, std::string> special_tokens = {});
  // The template of a model folder, plain when it has none. Errors name the
  // file and key, or the template line. `text_file`, when given, is the
  // template instead of the folder's own (kvactor-serve --chat-template);
  // the folder's special tokens stay.
  static result<chat_template> load(const std::filesystem::path& dir,
                                    const std::filesystem::path& text_file = {});

  bool is_plain() const { return !template_; }
  // The prompt for the messages; an error names what the template could not
  // render, or carries its raise_exception() text.
  result<std::string> render(const std::vector<chat_message>& messages,
                             const chat_options& options = {}) const;
  // The text that the template writes after an assistant's answer, trimmed
  // ("<|eot_id|>", "<|im_end|>", "</s>"); "" when it writes none, and for
  // the plain rendering.
  std::string_view end_of_turn() const { return end_of_turn_; }
  // How the template teaches the model to call tools (tool_calls.hpp).
  tool_call_format tool_format() const { return tool_format_; }

private:
  chat_template() = default;

  std::optional<jinja_template> template_;
  std::string special_tokens_json_; // "bos_token":"…",… (JSON object members)
  std::string end_of_turn_;
  tool_call_format tool_format_ = tool_call_format::json;
};

} // namespace kvactor::model
