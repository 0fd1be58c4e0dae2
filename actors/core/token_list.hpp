#pragma once
// token_list: one sequence's tokens in a reservation entry or a step plan —
// a single token in a decode step, a chunk in a prefill. Up to
// inline_capacity tokens live in the object itself, so that planning a decode
// step allocates nothing per sequence; longer lists go to the heap. Reads
// like a std::vector<token_id> (and CAF inspects it as a list).

#include "actors/core/types.hpp"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

namespace kvactor {

class token_list {
public:
  using value_type = token_id;
  using size_type = size_t;
  using iterator = token_id*;
  using const_iterator = const token_id*;
  static constexpr uint32_t inline_capacity = 4;

  token_list() = default;
  token_list(std::span<const token_id> tokens) { append(tokens); }
  token_list(const std::vector<token_id>& tokens) { append(tokens); }
  token_list(std::initializer_list<token_id> tokens) { append({tokens.begin(), tokens.size()}); }
  template <std::contiguous_iterator It>
  token_list(It first, It last) {
    append({std::to_address(first), static_cast<size_t>(last - first)});
  }

  token_list(const token_list& other) { append(other); }
  token_list(token_list&& other) noexcept { take(other); }
  token_list& operator=(const token_list& other) {
    if (this != &other) {
      clear();
      append(other);
    }
    return *this;
  }
  token_list& operator=(token_list&& other) noexcept {
    if (this != &other) {
      free_heap();
      take(other);
    }
    return *this;
  }
  ~token_list() { free_heap(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  token_id* data() { return on_heap() ? heap_ : inline_; }
  const token_id* data() const { return on_heap() ? heap_ : inline_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  token_id& operator[](size_t i) { return data()[i]; }
  token_id operator[](size_t i) const { return data()[i]; }
  token_id back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= capacity_)
      return;
    auto* grown = new token_id[n];
    std::memcpy(grown, data(), size_ * sizeof(token_id));
    free_heap();
    heap_ = grown;
    capacity_ = static_cast<uint32_t>(n);
  }
  void push_back(token_id t) {
    if (size_ == capacity_)
      reserve(2 * capacity_);
    data()[size_++] = t;
  }
  // For std::inserter (CAF's loading of lists).
  iterator insert(const_iterator pos, token_id t) {
    const auto i = static_cast<size_t>(pos - data());
    push_back(t);
    std::rotate(begin() + i, end() - 1, end());
    return begin() + i;
  }

  friend bool operator==(const token_list& a, const token_list& b) {
    return std::ranges::equal(a, b);
  }

private:
  bool on_heap() const { return capacity_ > inline_capacity; }
  void append(std::span<const token_id> tokens) {
    reserve(size_ + tokens.size());
    if (tokens.size() == 1) // NOTE: a decode step's token, without a call to memmove
      data()[size_] = tokens[0];
    else
      std::copy(tokens.begin(), tokens.end(), data() + size_);
    size_ += static_cast<uint32_t>(tokens.size());
  }
  void free_heap() {
    if (on_heap())
      delete[] heap_;
  }
  void take(token_list& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap())
      heap_ = other.heap_;
    else
      std::copy_n(other.inline_, inline_capacity, inline_); // NOTE: a fixed size copies inline
    other.capacity_ = inline_capacity;
    other.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = inline_capacity;
  union {
    token_id inline_[inline_capacity] = {};
    token_id* heap_;
  };
};

} // namespace kvactor
