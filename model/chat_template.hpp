#pragma once
// chat_template: a conversation rendered as the prompt a chat model was
// trained on. Checkpoints carry a Jinja template in tokenizer_config.json;
// kvactor does not run Jinja: it recognises the template's family by its
// markers and renders that family's format itself, as the reference
// templates do for plain text messages (no tools):
//
//   llama3   Llama 3      <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n
//                         Hi<|eot_id|>…
//   llama31  Llama 3.1+   the same after a system header with the knowledge and today's date
//   chatml   ChatML       <|im_start|>user\nHi<|im_end|>\n… (Qwen2, Qwen2.5: with the
//                         template's default system message when none is given)
//   qwen3    Qwen3        ChatML; earlier answers lose their <think> part
//   plain    no template  "user: Hi\n…assistant:" (a checkpoint without one, e.g. a base model)
//
// A template of another family is not guessed at: rendering answers an
// error naming the families kvactor renders.

#include "base/result.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

struct chat_message {
  std::string role; // system, user or assistant
  std::string content;
};

enum class chat_format : uint8_t { plain, llama3, llama31, chatml, qwen3, unsupported };

std::string_view to_string(chat_format f);

struct chat_options {
  std::string today = "26 Jul 2024"; // "%d %b %Y", for templates that print the date
  bool enable_thinking = true;       // qwen3: false opens the answer with an empty think block
};

class chat_template {
public:
  // The family that a template's text shows (nullopt: no template, plain).
  static chat_template detect(const std::optional<std::string>& text, std::string bos_token = {});
  // dir/tokenizer_config.json's chat_template and bos_token; a folder
  // without that file has no template (plain). Errors name the file and key.
  static result<chat_template> load(const std::filesystem::path& dir);

  chat_format format() const { return format_; }
  // The prompt for the messages, ending where the assistant's answer
  // begins; an error names the message or template it cannot render.
  result<std::string> render(const std::vector<chat_message>& messages,
                             const chat_options& options = {}) const;
  // The text that ends an assistant's turn ("" for plain).
  std::string_view end_of_turn() const;

private:
  chat_template() = default;

  chat_format format_ = chat_format::plain;
  std::string bos_token_;
  bool dated_ = false;        // llama31: today's date (strftime_now), not the template's fixed one
  std::string default_system_; // chatml: the system message when the conversation has none
};

// Today as Llama 3.2's template prints it: "25 Nov 2026".
std::string today_for_chat();

} // namespace kvactor::model
