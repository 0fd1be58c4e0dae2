#pragma once
// jinja_template: a template compiled and rendered by Jinja2 itself, in a
// CPython interpreter that kvactor embeds (Debian's libpython3 and
// python3-jinja2), set up as Hugging Face's apply_chat_template sets it up
// (model/chat/jinja_env.py).
//
//   auto t = jinja_template::compile("{{ greeting }}, {{ name }}!");
//   auto text = t->render(R"({"greeting":"Hi","name":"Ada"})");   // "Hi, Ada!"
//
// The interpreter starts on the first compile, once per process (or joins
// one the host application started), without its signal handlers and with
// no environment variables read. Every call takes the GIL for its own
// length only, on the caller's thread: kvactor renders on the HTTP front's
// threads, never on the runtime's actors, so the step loop never waits for
// Python.

#include "base/result.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct _object; // CPython's PyObject

namespace kvactor::model {

class jinja_template {
public:
  // An error names the line of a syntax error, or says why Python or Jinja2
  // could not start.
  static result<jinja_template> compile(std::string_view source);

  // The text for the variables of `context` (a JSON object) and `extra`
  // (another; context's keys win). strftime_now(format) reads `now` (Unix
  // seconds, local time), or the clock. An error names the template line and
  // what failed there, or carries the text of the template's
  // raise_exception().
  result<std::string> render(std::string_view context, std::string_view extra = "{}",
                             std::optional<int64_t> now = std::nullopt) const;

private:
  struct handle;
  explicit jinja_template(std::shared_ptr<const handle> h) : handle_(std::move(h)) {}

  std::shared_ptr<const handle> handle_; // the compiled jinja2.Template
};

} // namespace kvactor::model
