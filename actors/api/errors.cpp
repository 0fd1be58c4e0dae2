// kvactor's error codes (kvactor/errors.hpp) and their caf::errors.

#include "kvactor/errors.hpp"

#include <caf/make_message.hpp>

#include <utility>

namespace kvactor {

const char* to_string(errc code) {
  switch (code) {
    case errc::none: return "none";
    case errc::invalid_field: return "invalid_field";
    case errc::prompt_too_long: return "prompt_too_long";
    case errc::overloaded: return "overloaded";
    case errc::worker_lost: return "worker_lost";
    case errc::invalid_config: return "invalid_config";
    case errc::bad_model: return "bad_model";
    case errc::device_unusable: return "device_unusable";
    case errc::cannot_publish: return "cannot_publish";
    case errc::non_finite_logits: return "non_finite_logits";
  }
  return "unknown";
}

caf::error make_error(errc code, std::string message) {
  return {static_cast<uint8_t>(code), error_category, caf::make_message(std::move(message))};
}

errc code_of(const caf::error& e) {
  // NOTE: an empty caf::error has no category to read.
  return e && e.category() == error_category ? static_cast<errc>(e.code()) : errc::none;
}

std::string message_of(const caf::error& e) {
  if (code_of(e) != errc::none && e.context().match_elements<std::string>())
    return e.context().get_as<std::string>(0);
  return caf::to_string(e);
}

} // namespace kvactor
