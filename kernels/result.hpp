#pragma once
// result<T>: a value or an error message, for failures that are expected
// (no such device, out of memory). Broken invariants use KVACTOR_ASSERT.

#include <optional>
#include <string>
#include <utility>

#include "kernels/assert.hpp"

namespace kvactor::kernels {

struct error {
  std::string message;
};

template <class T>
class [[nodiscard]] result {
public:
  result(T value) : value_(std::move(value)) {}        // NOLINT: implicit on purpose
  result(error e) : error_(std::move(e.message)) {}    // NOLINT: implicit on purpose

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const std::string& error_message() const { return error_; }

  T& value() {
    KVACTOR_ASSERT(value_.has_value(), "result holds an error");
    return *value_;
  }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }

private:
  std::optional<T> value_;
  std::string error_;
};

} // namespace kvactor::kernels
