#include "model/gguf/gguf_value.hpp"

#include <bit>

namespace kvactor::model {
namespace {

// NOTE: GGUF allows nested arrays but no writer nests deeper than two; the
// limit keeps a hostile file of nested empty arrays from exhausting the stack.
constexpr int max_array_depth = 8;

// The fewest bytes one element of type `t` takes in the file.
uint64_t min_encoded_size(gguf_value_type t) {
  if (t == gguf_value_type::string) return 8;  // the length
  if (t == gguf_value_type::array) return 12;  // element type and count
  return gguf_value_size(t);
}

std::string truncated(std::string_view what, uint64_t need, const gguf_cursor& in) {
  return "truncated: " + std::string(what) + " needs " + std::to_string(need) +
         " bytes at offset " + std::to_string(in.pos()) + " but only " +
         std::to_string(in.remaining()) + " remain";
}

} // namespace

std::optional<gguf_value_type> gguf_value_type_from_id(uint32_t id) {
  if (id > static_cast<uint32_t>(gguf_value_type::f64)) return std::nullopt;
  return static_cast<gguf_value_type>(id);
}

std::string_view gguf_value_type_name(gguf_value_type t) {
  switch (t) {
  case gguf_value_type::u8: return "uint8";
  case gguf_value_type::i8: return "int8";
  case gguf_value_type::u16: return "uint16";
  case gguf_value_type::i16: return "int16";
  case gguf_value_type::u32: return "uint32";
  case gguf_value_type::i32: return "int32";
  case gguf_value_type::f32: return "float32";
  case gguf_value_type::boolean: return "bool";
  case gguf_value_type::string: return "string";
  case gguf_value_type::array: return "array";
  case gguf_value_type::u64: return "uint64";
  case gguf_value_type::i64: return "int64";
  case gguf_value_type::f64: return "float64";
  }
  return "?";
}

uint32_t gguf_value_size(gguf_value_type t) {
  switch (t) {
  case gguf_value_type::u8:
  case gguf_value_type::i8:
  case gguf_value_type::boolean: return 1;
  case gguf_value_type::u16:
  case gguf_value_type::i16: return 2;
  case gguf_value_type::u32:
  case gguf_value_type::i32:
  case gguf_value_type::f32: return 4;
  case gguf_value_type::u64:
  case gguf_value_type::i64:
  case gguf_value_type::f64: return 8;
  default: return 0;
  }
}

bool is_integer(gguf_value_type t) {
  switch (t) {
  case gguf_value_type::f32:
  case gguf_value_type::f64:
  case gguf_value_type::boolean: return false;
  default: return gguf_value_size(t) != 0;
  }
}

result<gguf_value> gguf_value::parse(gguf_cursor& in, gguf_value_type type) {
  return parse_at(in, type, 0);
}

result<gguf_value> gguf_value::parse_at(gguf_cursor& in, gguf_value_type type, int depth) {
  gguf_value v;
  v.type_ = type;
  if (const uint32_t size = gguf_value_size(type); size != 0) {
    if (!in.take(size, v.bytes_)) return error{truncated(gguf_value_type_name(type), size, in)};
    if (type == gguf_value_type::boolean && static_cast<uint8_t>(v.bytes_[0]) > 1)
      return error{"bool value " + std::to_string(static_cast<uint8_t>(v.bytes_[0])) +
                   " is neither 0 nor 1"};
    return v;
  }
  if (type == gguf_value_type::string) {
    uint64_t len = 0;
    if (!in.read_u64(len)) return error{truncated("a string's length", 8, in)};
    if (!in.take(len, v.bytes_)) return error{truncated("a string", len, in)};
    return v;
  }
  if (depth >= max_array_depth)
    return error{"arrays nested deeper than " + std::to_string(max_array_depth)};
  uint32_t elem_id = 0;
  if (!in.read_u32(elem_id)) return error{truncated("an array's element type", 4, in)};
  const auto elem = gguf_value_type_from_id(elem_id);
  if (!elem) return error{"array of unknown value type id " + std::to_string(elem_id)};
  v.element_type_ = *elem;
  if (!in.read_u64(v.count_)) return error{truncated("an array's length", 8, in)};
  // NOTE: checked before anything is read or allocated: a count of 2^60
  // elements in a small file is refused here.
  const uint64_t min_size = min_encoded_size(*elem);
  if (v.count_ > in.remaining() / min_size)
    return error{"array of " + std::to_string(v.count_) + " " +
                 std::string(gguf_value_type_name(*elem)) + " values needs at least " +
                 (v.count_ > UINT64_MAX / min_size ? std::string("2^64")
                                                   : std::to_string(v.count_ * min_size)) +
                 " bytes but only " + std::to_string(in.remaining()) + " remain"};
  const std::size_t start = in.pos();
  if (gguf_value_size(*elem) != 0) {
    std::span<const std::byte> items;
    in.take(v.count_ * min_size, items); // fits: checked above
    if (*elem == gguf_value_type::boolean)
      for (std::size_t i = 0; i < items.size(); ++i)
        if (static_cast<uint8_t>(items[i]) > 1)
          return error{"element " + std::to_string(i) + ": bool value " +
                       std::to_string(static_cast<uint8_t>(items[i])) + " is neither 0 nor 1"};
  } else {
    for (uint64_t i = 0; i < v.count_; ++i) {
      auto e = parse_at(in, *elem, depth + 1);
      if (!e) return error{"element " + std::to_string(i) + ": " + e.error().message};
    }
  }
  v.bytes_ = in.bytes().subspan(start, in.pos() - start);
  return v;
}

std::string gguf_value::type_name() const {
  std::string name(gguf_value_type_name(type_));
  if (type_ == gguf_value_type::array)
    name += " of " + std::string(gguf_value_type_name(element_type_));
  return name;
}

std::optional<uint64_t> gguf_value::to_unsigned() const {
  const std::byte* p = bytes_.data();
  int64_t s = 0;
  switch (type_) {
  case gguf_value_type::u8: return gguf_cursor::load_le<uint8_t>(p);
  case gguf_value_type::u16: return gguf_cursor::load_le<uint16_t>(p);
  case gguf_value_type::u32: return gguf_cursor::load_le<uint32_t>(p);
  case gguf_value_type::u64: return gguf_cursor::load_le<uint64_t>(p);
  case gguf_value_type::i8:
  case gguf_value_type::i16:
  case gguf_value_type::i32:
  case gguf_value_type::i64: s = *to_signed(); break;
  default: return std::nullopt;
  }
  if (s < 0) return std::nullopt;
  return static_cast<uint64_t>(s);
}

std::optional<int64_t> gguf_value::to_signed() const {
  const std::byte* p = bytes_.data();
  switch (type_) {
  case gguf_value_type::i8: return static_cast<int8_t>(gguf_cursor::load_le<uint8_t>(p));
  case gguf_value_type::i16: return static_cast<int16_t>(gguf_cursor::load_le<uint16_t>(p));
  case gguf_value_type::i32: return static_cast<int32_t>(gguf_cursor::load_le<uint32_t>(p));
  case gguf_value_type::i64: return static_cast<int64_t>(gguf_cursor::load_le<uint64_t>(p));
  case gguf_value_type::u8:
  case gguf_value_type::u16:
  case gguf_value_type::u32:
  case gguf_value_type::u64: {
    const uint64_t u = *to_unsigned();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  default: return std::nullopt;
  }
}

std::optional<double> gguf_value::to_double() const {
  if (type_ == gguf_value_type::f32)
    return std::bit_cast<float>(gguf_cursor::load_le<uint32_t>(bytes_.data()));
  if (type_ == gguf_value_type::f64)
    return std::bit_cast<double>(gguf_cursor::load_le<uint64_t>(bytes_.data()));
  return std::nullopt;
}

std::optional<bool> gguf_value::to_bool() const {
  if (type_ != gguf_value_type::boolean) return std::nullopt;
  return bytes_[0] != std::byte{0};
}

std::optional<std::string_view> gguf_value::to_string() const {
  if (type_ != gguf_value_type::string) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
}

std::vector<gguf_value> gguf_value::elements() const {
  std::vector<gguf_value> out;
  if (type_ != gguf_value_type::array) return out;
  out.reserve(count_);
  gguf_cursor in(bytes_);
  for (uint64_t i = 0; i < count_; ++i) {
    auto e = parse_at(in, element_type_, 1);
    KVACTOR_ASSERT(e.has_value(), "a GGUF array validated when the file was opened");
    out.push_back(std::move(*e));
  }
  return out;
}

} // namespace kvactor::model
