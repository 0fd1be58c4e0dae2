#pragma once
// Writes GGUF version 3 files (gguf_file.hpp has the layout): what the tests
// and kvactor-make-tiny use to produce models in the format llama.cpp's users
// download.
//
//   gguf_writer w;
//   w.add_string("general.architecture", "llama");
//   w.add_u32("llama.block_count", 2);
//   w.add_tensor("token_embd.weight", {hidden, vocab}, ggml_type::f32, bytes);
//   if (auto ok = w.write(path); !ok) ...

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "model/gguf/gguf_types.hpp"
#include "model/gguf/gguf_value.hpp"

namespace kvactor::model {

// One metadata value as the file holds it: its type and the bytes after the
// type (for arrays: element type, count, elements).
struct gguf_encoded {
  gguf_value_type type = gguf_value_type::u8;
  gguf_value_type element_type = gguf_value_type::u8; // arrays only
  std::string bytes;

  static gguf_encoded u8(uint8_t v);
  static gguf_encoded i8(int8_t v);
  static gguf_encoded u16(uint16_t v);
  static gguf_encoded i16(int16_t v);
  static gguf_encoded u32(uint32_t v);
  static gguf_encoded i32(int32_t v);
  static gguf_encoded u64(uint64_t v);
  static gguf_encoded i64(int64_t v);
  static gguf_encoded f32(float v);
  static gguf_encoded f64(double v);
  static gguf_encoded boolean(bool v);
  static gguf_encoded string(std::string_view v);
  // Every item must have type `element_type`; arrays of arrays nest.
  static gguf_encoded array(gguf_value_type element_type, const std::vector<gguf_encoded>& items);
};

class gguf_writer {
public:
  // Keys must be unique (asserted).
  void add(std::string key, gguf_encoded value);
  void add_u32(std::string key, uint32_t v) { add(std::move(key), gguf_encoded::u32(v)); }
  void add_u64(std::string key, uint64_t v) { add(std::move(key), gguf_encoded::u64(v)); }
  void add_i32(std::string key, int32_t v) { add(std::move(key), gguf_encoded::i32(v)); }
  void add_f32(std::string key, float v) { add(std::move(key), gguf_encoded::f32(v)); }
  void add_bool(std::string key, bool v) { add(std::move(key), gguf_encoded::boolean(v)); }
  void add_string(std::string key, std::string_view v) {
    add(std::move(key), gguf_encoded::string(v));
  }
  void add_string_array(std::string key, const std::vector<std::string>& v);
  void add_f32_array(std::string key, std::span<const float> v);
  void add_i32_array(std::string key, std::span<const int32_t> v);
  // Writes `general.alignment` (a power of two; 32 when never set).
  void set_alignment(uint32_t alignment);

  // `bytes` must hold exactly the tensor's bytes for `type` and `dims`
  // (dims[0] the row length, a multiple of the type's block size).
  void add_tensor(std::string name, std::vector<uint64_t> dims, ggml_type type,
                  std::span<const std::byte> bytes);

  // The whole file: header, metadata, tensor table, padding, tensor data
  // (each tensor at an aligned offset, in the order added).
  std::string serialize() const;
  status write(const std::filesystem::path& path) const;

private:
  struct tensor {
    std::string name;
    std::vector<uint64_t> dims;
    ggml_type type;
    std::vector<std::byte> bytes;
  };
  std::vector<std::pair<std::string, gguf_encoded>> kvs_;
  std::vector<tensor> tensors_;
  uint32_t alignment_ = 32;
};

} // namespace kvactor::model
