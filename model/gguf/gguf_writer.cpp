#include "model/gguf/gguf_writer.hpp"

#include <bit>
#include <fstream>

#include "base/assert.hpp"

namespace kvactor::model {
namespace {

template <class T>
void put_le(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
}

void put_string(std::string& out, std::string_view s) {
  put_le<uint64_t>(out, s.size());
  out += s;
}

template <class T>
gguf_encoded scalar(gguf_value_type type, T v) {
  gguf_encoded e;
  e.type = type;
  put_le(e.bytes, v);
  return e;
}

void pad_to(std::string& out, uint64_t alignment) {
  while (out.size() % alignment != 0) out += '\0';
}

} // namespace

gguf_encoded gguf_encoded::u8(uint8_t v) { return scalar(gguf_value_type::u8, v); }
gguf_encoded gguf_encoded::i8(int8_t v) {
  return scalar(gguf_value_type::i8, static_cast<uint8_t>(v));
}
gguf_encoded gguf_encoded::u16(uint16_t v) { return scalar(gguf_value_type::u16, v); }
gguf_encoded gguf_encoded::i16(int16_t v) {
  return scalar(gguf_value_type::i16, static_cast<uint16_t>(v));
}
gguf_encoded gguf_encoded::u32(uint32_t v) { return scalar(gguf_value_type::u32, v); }
gguf_encoded gguf_encoded::i32(int32_t v) {
  return scalar(gguf_value_type::i32, static_cast<uint32_t>(v));
}
gguf_encoded gguf_encoded::u64(uint64_t v) { return scalar(gguf_value_type::u64, v); }
gguf_encoded gguf_encoded::i64(int64_t v) {
  return scalar(gguf_value_type::i64, static_cast<uint64_t>(v));
}
gguf_encoded gguf_encoded::f32(float v) {
  return scalar(gguf_value_type::f32, std::bit_cast<uint32_t>(v));
}
gguf_encoded gguf_encoded::f64(double v) {
  return scalar(gguf_value_type::f64, std::bit_cast<uint64_t>(v));
}
gguf_encoded gguf_encoded::boolean(bool v) {
  return scalar(gguf_value_type::boolean, static_cast<uint8_t>(v ? 1 : 0));
}
gguf_encoded gguf_encoded::string(std::string_view v) {
  gguf_encoded e;
  e.type = gguf_value_type::string;
  put_string(e.bytes, v);
  return e;
}

gguf_encoded gguf_encoded::array(gguf_value_type element_type,
                                 const std::vector<gguf_encoded>& items) {
  gguf_encoded e;
  e.type = gguf_value_type::array;
  e.element_type = element_type;
  put_le<uint32_t>(e.bytes, static_cast<uint32_t>(element_type));
  put_le<uint64_t>(e.bytes, items.size());
  for (const auto& item : items) {
    KVACTOR_ASSERT(item.type == element_type, "GGUF array items of the array's type");
    // NOTE: an element is written without its own type tag; a nested array
    // keeps its element type and count, which are part of `bytes`.
    e.bytes += item.bytes;
  }
  return e;
}

void gguf_writer::add(std::string key, gguf_encoded value) {
  for (const auto& kv : kvs_) KVACTOR_ASSERT(kv.first != key, "GGUF metadata keys are unique");
  kvs_.emplace_back(std::move(key), std::move(value));
}

void gguf_writer::add_string_array(std::string key, const std::vector<std::string>& v) {
  std::vector<gguf_encoded> items;
  items.reserve(v.size());
  for (const auto& s : v) items.push_back(gguf_encoded::string(s));
  add(std::move(key), gguf_encoded::array(gguf_value_type::string, items));
}

void gguf_writer::add_f32_array(std::string key, std::span<const float> v) {
  std::vector<gguf_encoded> items;
  for (float x : v) items.push_back(gguf_encoded::f32(x));
  add(std::move(key), gguf_encoded::array(gguf_value_type::f32, items));
}

void gguf_writer::add_i32_array(std::string key, std::span<const int32_t> v) {
  std::vector<gguf_encoded> items;
  for (int32_t x : v) items.push_back(gguf_encoded::i32(x));
  add(std::move(key), gguf_encoded::array(gguf_value_type::i32, items));
}

void gguf_writer::set_alignment(uint32_t alignment) {
  KVACTOR_ASSERT(alignment != 0 && (alignment & (alignment - 1)) == 0,
                 "GGUF alignment is a power of two");
  alignment_ = alignment;
  add_u32("general.alignment", alignment);
}

void gguf_writer::add_tensor(std::string name, std::vector<uint64_t> dims, ggml_type type,
                             std::span<const std::byte> bytes) {
  for (const auto& t : tensors_) KVACTOR_ASSERT(t.name != name, "GGUF tensor names are unique");
  const auto size = ggml_tensor_bytes(type, dims);
  KVACTOR_ASSERT(size && *size == bytes.size(), "GGUF tensor bytes match its type and dims");
  tensors_.push_back({std::move(name), std::move(dims), type, {bytes.begin(), bytes.end()}});
}

std::string gguf_writer::serialize() const {
  std::string out = "GGUF";
  put_le<uint32_t>(out, 3);
  put_le<uint64_t>(out, tensors_.size());
  put_le<uint64_t>(out, kvs_.size());
  for (const auto& [key, value] : kvs_) {
    put_string(out, key);
    put_le<uint32_t>(out, static_cast<uint32_t>(value.type));
    out += value.bytes;
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    put_string(out, t.name);
    put_le<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (auto d : t.dims) put_le<uint64_t>(out, d);
    put_le<uint32_t>(out, static_cast<uint32_t>(t.type));
    put_le<uint64_t>(out, offset);
    offset += (t.bytes.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  if (tensors_.empty()) return out;
  pad_to(out, alignment_);
  for (const auto& t : tensors_) {
    out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    pad_to(out, alignment_);
  }
  return out;
}

status gguf_writer::write(const std::filesystem::path& path) const {
  const std::string bytes = serialize();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error_in(path.string(), "cannot create file");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return error_in(path.string(), "write failed");
  return {};
}

} // namespace kvactor::model
