#pragma once
// error and result<T>: expected failures as values (C++20 has no std::expected).
//
//   result<model_config> r = load_config(dir / "config.json");
//   if (!r) return r.error();            // propagate
//   const model_config& c = *r;
//
// Messages name the file and the key or tensor at fault, e.g.
//   "/m/config.json: key 'hidden_size': must be positive (got 0)".

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "kernels/assert.hpp"

namespace kvactor::model {

struct error {
  std::string message;
};

/// An error whose message is "<where>: <what>".
inline error make_error(std::string_view where, std::string_view what) {
  std::string m(where);
  m += ": ";
  m += what;
  return error{std::move(m)};
}

template <class T>
class [[nodiscard]] result {
public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(struct error e) : state_(std::in_place_index<1>, std::move(e)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    KVACTOR_ASSERT(has_value(), "result::value() on an error");
    return std::get<0>(state_);
  }
  const T& value() const& {
    KVACTOR_ASSERT(has_value(), "result::value() on an error");
    return std::get<0>(state_);
  }
  T&& value() && {
    KVACTOR_ASSERT(has_value(), "result::value() on an error");
    return std::get<0>(std::move(state_));
  }
  const struct error& error() const {
    KVACTOR_ASSERT(!has_value(), "result::error() on a value");
    return std::get<1>(state_);
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

private:
  std::variant<T, struct error> state_;
};

/// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
public:
  result() = default;
  result(struct error e) : error_(std::move(e)), failed_(true) {}

  bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return has_value(); }
  const struct error& error() const {
    KVACTOR_ASSERT(failed_, "result::error() on a value");
    return error_;
  }

private:
  struct error error_;
  bool failed_ = false;
};

using status = result<void>;

} // namespace kvactor::model
