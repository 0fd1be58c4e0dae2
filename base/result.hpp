#pragma once
// error and result<T>: expected failures as values (C++20 has no std::expected),
// for every layer: no such device, a bad model folder, a refused request.
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
#include <optional>

#include "base/assert.hpp"

namespace kvactor {

struct error {
  std::string message;
};

// An error in <where>: its message is "<where>: <what>". (kvactor::make_error,
// kvactor/errors.hpp, makes the caf::error a runtime answers with.)
inline error error_in(std::string_view where, std::string_view what) {
  std::string m(where);
  m += ": ";
  m += what;
  return error{std::move(m)};
}

template <class T>
class [[nodiscard]] result {
public:
  result(T value) : value_(std::move(value)) {}
  result(struct error e) : error_(std::move(e)) {}

  bool has_value() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    KVACTOR_ASSERT(has_value(), "result::value() on an error");
    return *value_;
  }
  const T& value() const& {
    KVACTOR_ASSERT(has_value(), "result::value() on an error");
    return *value_;
  }
  T&& value() && {
    KVACTOR_ASSERT(has_value(), "result::value() on an error");
    return std::move(*value_);
  }
  const struct error& error() const {
    KVACTOR_ASSERT(!has_value(), "result::error() on a value");
    return error_;
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

private:
  // NOTE: optional + error rather than std::variant: GCC 12 reports a false
  // -Wfree-nonheap-object when a variant holding a moved-from T is destroyed.
  std::optional<T> value_;
  struct error error_;
};

// result<void>: success or an error.
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

} // namespace kvactor
