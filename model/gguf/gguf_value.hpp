#pragma once
// GGUF metadata values: the value types, and gguf_value, a view of one value
// inside a mapped GGUF file.
//
//   value  := u8 | i8 | u16 | i16 | u32 | i32 | f32 | bool | string | array
//             | u64 | i64 | f64                (little-endian, unaligned)
//   string := u64 length, `length` bytes of UTF-8 (no terminator)
//   array  := u32 element type, u64 count, `count` values (arrays may nest)
//
// A gguf_value keeps a span of the file's bytes rather than a decoded copy:
// a vocabulary of 150,000 strings costs nothing until asked for, and a
// hostile element count cannot make the reader allocate.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "model/gguf/gguf_cursor.hpp"

namespace kvactor::model {

enum class gguf_value_type : uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

// nullopt for an id GGUF does not define.
std::optional<gguf_value_type> gguf_value_type_from_id(uint32_t id);
// As the specification names it: "uint8", "int32", "float32", "bool", "string", "array".
std::string_view gguf_value_type_name(gguf_value_type t);
// Bytes of one value of a fixed-size type; 0 for string and array.
uint32_t gguf_value_size(gguf_value_type t);
bool is_integer(gguf_value_type t);

class gguf_value {
public:
  // Reads one value of type `type` at `in` and moves past it, checking every
  // length against the bytes left. The error's message says what is wrong,
  // without the file or key (the caller adds them).
  static result<gguf_value> parse(gguf_cursor& in, gguf_value_type type);

  gguf_value_type type() const { return type_; }
  // "uint32", or "array of string" for arrays.
  std::string type_name() const;
  // Arrays only: the elements' type and count.
  gguf_value_type element_type() const { return element_type_; }
  uint64_t size() const { return count_; }

  // Integer types: the value when it fits, else nullopt (also for other types).
  std::optional<uint64_t> to_unsigned() const;
  std::optional<int64_t> to_signed() const;
  // float32 and float64; nullopt for other types.
  std::optional<double> to_double() const;
  // bool only.
  std::optional<bool> to_bool() const;
  // string only.
  std::optional<std::string_view> to_string() const;
  // Arrays only: views of the elements, in order.
  std::vector<gguf_value> elements() const;

private:
  static result<gguf_value> parse_at(gguf_cursor& in, gguf_value_type type, int depth);

  gguf_value_type type_ = gguf_value_type::u8;
  gguf_value_type element_type_ = gguf_value_type::u8;
  uint64_t count_ = 0;
  // Scalars: their bytes; strings: the text; arrays: the elements' encodings.
  std::span<const std::byte> bytes_;
};

} // namespace kvactor::model
