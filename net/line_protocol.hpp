#pragma once
// The TCP line protocol, pure: one JSON object per line each way. Parsing
// (with validation and the error codes of PROTOCOL.md) and formatting; no
// sockets here.
//
//   client: {"op":"generate","id":"r1","prompt":"…",…} {"op":"cancel","id":"r1"}
//           {"op":"stats"} {"op":"ping"}
//   server: {"event":"accepted"|"token"|"done"|"stats"|"pong"|"error",…}

#include "kvactor/kvactor.hpp"
#include "model/sampling_defaults.hpp"

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace kvactor::net {

struct generate_op {
  std::string id;
  generate_request request;
};
struct cancel_op {
  std::string id;
};
struct stats_op {};
struct ping_op {};

// An error line: about a request (id set) or about an unparseable line.
struct protocol_error {
  std::string code; // bad_json, unknown_op, missing_field, invalid_field, duplicate_id,
                    // unknown_id, line_too_long, prompt_too_long, overloaded
  std::optional<std::string> id;
  std::string message;
  std::optional<int32_t> choice{}; // the choice it ends, of a request of several
};

using client_message = std::variant<generate_op, cancel_op, stats_op, ping_op, protocol_error>;

// Parses one line (without its '\n'; a trailing '\r' is ignored). A
// generate line's omitted sampling fields take `defaults` (the model's
// generation_config.json) where it sets them, else the protocol's own.
class line_parser {
public:
  explicit line_parser(model::sampling_defaults defaults = {}) : defaults_(defaults) {}

  client_message parse(std::string_view line);

private:
  model::sampling_defaults defaults_;
  simdjson::ondemand::parser parser_;
  simdjson::padded_string buffer_;
};

// prompt_token_ids: the prompt's ids when the request asked (return_token_ids).
std::string format_accepted(std::string_view id, int32_t num_prompt_tokens,
                            const std::vector<int32_t>& prompt_token_ids = {});
// The events of a request of several choices (num_choices > 1) name theirs.
std::string format_token(std::string_view id, const token_event& ev, int32_t num_choices = 1);
std::string format_done(std::string_view id, const done_event& done, int32_t num_choices = 1);
std::string format_stats(const runtime_figures& f);
std::string format_pong();
std::string format_error(const protocol_error& e);

// The protocol's own limit (the runtime's ranges for the fields are in
// kvactor.hpp, the model sets the context length).
inline constexpr size_t default_max_line_bytes = size_t{1} << 20;

} // namespace kvactor::net
