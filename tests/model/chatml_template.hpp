#pragma once
// A ChatML chat template of the shape Qwen's are (written here, for tests of
// the fronts; the published templates are tested against Jinja2 in
// tests/model/chat_template_reference_test.cpp). It ends turns with
// <|im_end|>, refuses roles other than system, user and assistant, and
// knows Qwen3's enable_thinking.

#include "model/chat_template.hpp"

namespace kvactor::test_support {

inline const std::string chatml_template_text =
  "{% for m in messages %}"
  "{% if m.role not in ['system', 'user', 'assistant'] %}"
  "{{ raise_exception('unknown role ' + m.role) }}{% endif %}"
  "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
  "{% if add_generation_prompt %}<|im_start|>assistant\n"
  "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}"
  "{% endif %}";

inline const model::chat_template& chatml_template() {
  static const model::chat_template t = *model::chat_template::from_text(chatml_template_text);
  return t;
}

} // namespace kvactor::test_support
