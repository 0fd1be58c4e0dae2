#pragma once
// gguf_cursor: bounds-checked little-endian reads over a mapped GGUF file.
// Every read checks the bytes left first and leaves the cursor where it was
// when they are too few, so a truncated or hostile file never reads past the
// mapping.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace kvactor::model {

class gguf_cursor {
public:
  explicit gguf_cursor(std::span<const std::byte> bytes, std::size_t pos = 0)
      : bytes_(bytes), pos_(pos) {}

  std::size_t pos() const { return pos_; }
  std::size_t size() const { return bytes_.size(); }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  std::span<const std::byte> bytes() const { return bytes_; }

  // The next `n` bytes, consumed; false when fewer remain.
  bool take(uint64_t n, std::span<const std::byte>& out) {
    if (n > remaining()) return false;
    out = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  bool skip(uint64_t n) {
    std::span<const std::byte> unused;
    return take(n, unused);
  }
  bool read_u32(uint32_t& out) { return read_le(out); }
  bool read_u64(uint64_t& out) { return read_le(out); }
  // A GGUF string: u64 length, then that many bytes.
  bool read_string(std::string_view& out) {
    const std::size_t start = pos_;
    uint64_t len = 0;
    std::span<const std::byte> text;
    if (!read_u64(len) || !take(len, text)) {
      pos_ = start;
      return false;
    }
    out = {reinterpret_cast<const char*>(text.data()), text.size()};
    return true;
  }

  // An unsigned little-endian integer of sizeof(T) bytes at `p`.
  template <class T>
  static T load_le(const std::byte* p) {
    T v = 0;
    for (std::size_t i = sizeof(T); i-- > 0;)
      v = static_cast<T>((v << 8) | static_cast<T>(static_cast<uint8_t>(p[i])));
    return v;
  }

private:
  template <class T>
  bool read_le(T& out) {
    if (remaining() < sizeof(T)) return false;
    out = load_le<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return true;
  }

  std::span<const std::byte> bytes_;
  std::size_t pos_;
};

} // namespace kvactor::model
