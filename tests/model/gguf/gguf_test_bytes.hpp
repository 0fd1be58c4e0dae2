#pragma once
// Helpers for the GGUF tests: files from bytes, and patches of a writer's
// output that turn a valid file into a malformed one.

#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model::test_support {

inline void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void put_string(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out += s;
}
// "GGUF", version, counts.
inline std::string header(uint32_t version, uint64_t num_tensors, uint64_t num_kvs) {
  std::string out = "GGUF";
  put_u32(out, version);
  put_u64(out, num_tensors);
  put_u64(out, num_kvs);
  return out;
}

// Overwrites `bytes` at `pos` with the little-endian `v` of `width` bytes.
inline void patch(std::string& bytes, std::size_t pos, uint64_t v, int width) {
  ASSERT_LE(pos + width, bytes.size());
  for (int i = 0; i < width; ++i) bytes[pos + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Where the first occurrence of the GGUF string `s` (length and text) ends.
inline std::size_t end_of_string(const std::string& bytes, std::string_view s) {
  std::string encoded;
  put_string(encoded, s);
  const auto pos = bytes.find(encoded);
  EXPECT_NE(pos, std::string::npos) << s;
  return pos == std::string::npos ? 0 : pos + encoded.size();
}

// The position of a tensor info's type field (the offset follows it).
inline std::size_t tensor_type_pos(const std::string& bytes, std::string_view name,
                                   std::size_t num_dims) {
  return end_of_string(bytes, name) + 4 + 8 * num_dims;
}

inline result<gguf_file> open_bytes(const temp_dir& dir, const std::string& bytes) {
  const auto path = dir / "m.gguf";
  write_file(path, bytes);
  return gguf_file::open(path);
}

// The error message of opening `bytes` (empty, and a test failure, if it opens).
inline std::string open_error(const temp_dir& dir, const std::string& bytes) {
  auto f = open_bytes(dir, bytes);
  EXPECT_FALSE(f) << "the file opened";
  if (f) return {};
  EXPECT_NE(f.error().message.find((dir / "m.gguf").string()), std::string::npos)
    << "the message names the file: " << f.error().message;
  return f.error().message;
}

} // namespace kvactor::model::test_support
