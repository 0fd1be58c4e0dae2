#pragma once
// input_budget: the bytes of unfinished input (partial lines) that all the
// connections of a server may hold together. Thread-safe.
//
//   if (!budget.take(n)) drop the line;  ...  budget.give(n);

#include <atomic>
#include <cstddef>

namespace kvactor::net {

class input_budget {
public:
  explicit input_budget(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Reserves n bytes; false (nothing reserved) when that passes the limit.
  bool take(size_t n) {
    size_t used = used_.load();
    while (used + n <= max_bytes_)
      if (used_.compare_exchange_weak(used, used + n))
        return true;
    return false;
  }
  void give(size_t n) { used_.fetch_sub(n); }
  size_t used() const { return used_.load(); }
  size_t max_bytes() const { return max_bytes_; }

private:
  size_t max_bytes_;
  std::atomic<size_t> used_{0};
};

} // namespace kvactor::net
