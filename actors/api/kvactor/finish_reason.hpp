#pragma once
// How a choice ended: a done_event's finish_reason, and the sequences' own
// (the bookkeeping core includes this header; it needs no CAF).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace kvactor {

// none: not ended (a sequence still running; never in a done_event).
// error: ended without its result (done_event::error_code says why).
enum class finish_reason : uint8_t { none, eos, max_tokens, stop, aborted, error };

// "none", "eos", "max_tokens", "stop", "aborted", "error": the names the line
// protocol sends.
constexpr std::string_view to_string(finish_reason r) {
  switch (r) {
    case finish_reason::none: return "none";
    case finish_reason::eos: return "eos";
    case finish_reason::max_tokens: return "max_tokens";
    case finish_reason::stop: return "stop";
    case finish_reason::aborted: return "aborted";
    case finish_reason::error: return "error";
  }
  return "?";
}

// The reason to_string names, or nullopt for any other text.
constexpr std::optional<finish_reason> finish_reason_of(std::string_view name) {
  for (auto r : {finish_reason::none, finish_reason::eos, finish_reason::max_tokens,
                 finish_reason::stop, finish_reason::aborted, finish_reason::error})
    if (to_string(r) == name)
      return r;
  return std::nullopt;
}

// Prints to_string's name (test failures and logs show "aborted", not a byte).
inline std::ostream& operator<<(std::ostream& os, finish_reason r) {
  return os << to_string(r);
}

} // namespace kvactor
