#pragma once
// Reading GGUF files (ggml's model format, docs/gguf.md) through mmap.
//
//   "GGUF" u32 version (2 or 3) u64 num_tensors u64 num_kv
//   num_kv      x [ string key, u32 value type, value ]           (gguf_value.hpp)
//   num_tensors x [ string name, u32 num_dims, u64 dims[num_dims],
//                   u32 ggml_type, u64 offset ]
//   padding to `general.alignment` (default 32)
//   data: each tensor at data start + offset (a multiple of the alignment)
//
// Everything is validated when the file is opened: counts and lengths against
// the bytes left before anything is allocated, no duplicate keys or tensor
// names, every tensor's type known, its row length a multiple of the type's
// block size, its offset aligned and its bytes inside the file. Only
// little-endian files are read.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "model/gguf/gguf_types.hpp"
#include "model/gguf/gguf_value.hpp"
#include "model/mapped_file.hpp"

namespace kvactor::model {

struct gguf_tensor_info {
  std::string name;
  // GGUF order: dims[0] varies fastest (the row length); a [rows, cols]
  // matrix of PyTorch is dims {cols, rows}.
  std::vector<uint64_t> dims;
  ggml_type type = ggml_type::f32;
  uint64_t offset = 0;    // relative to the data section
  uint64_t num_bytes = 0; // from type and dims

  uint64_t num_elements() const;
};

struct gguf_kv {
  std::string key;
  gguf_value value;
};

class gguf_file {
public:
  static result<gguf_file> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // Where the data section starts in the file.
  uint64_t data_offset() const { return data_offset_; }

  // Metadata in file order.
  const std::vector<gguf_kv>& metadata() const { return kvs_; }
  bool contains(std::string_view key) const { return find_key(key) != nullptr; }
  const gguf_value* find_key(std::string_view key) const;

  // Typed getters. Errors name the file and key: "missing", or the expected
  // and the found type ("expected uint32, found string").
  result<uint32_t> u32(std::string_view key) const;
  result<uint64_t> u64(std::string_view key) const;
  result<int32_t> i32(std::string_view key) const;
  result<float> f32(std::string_view key) const;
  result<bool> boolean(std::string_view key) const;
  result<std::string> str(std::string_view key) const;
  // Any integer type that holds a non-negative value: writers differ in the
  // width they use for counts and ids.
  result<uint64_t> uint(std::string_view key) const;
  // float32 or float64.
  result<double> number(std::string_view key) const;
  // The element count of an array of any type.
  result<uint64_t> array_size(std::string_view key) const;
  result<std::vector<std::string>> string_array(std::string_view key) const;
  result<std::vector<float>> f32_array(std::string_view key) const;
  result<std::vector<int32_t>> i32_array(std::string_view key) const;

  // Tensors in file order.
  const std::vector<gguf_tensor_info>& tensors() const { return tensors_; }
  const gguf_tensor_info* find(std::string_view name) const;
  // The tensor's bytes inside the mapping (aligned to alignment() relative to
  // the file's start).
  const std::byte* data(const gguf_tensor_info& t) const;
  // mapped_file::drop_pages.
  void drop_pages() const { file_.drop_pages(); }
  uint64_t num_bytes(const gguf_tensor_info& t) const { return t.num_bytes; }

  // "<file>: key '<key>': <what>".
  error key_error(std::string_view key, std::string_view what) const;

private:
  result<const gguf_value*> typed(std::string_view key, gguf_value_type type) const;
  result<const gguf_value*> typed_array(std::string_view key, gguf_value_type elem) const;

  std::filesystem::path path_;
  mapped_file file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<gguf_kv> kvs_;
  std::unordered_map<std::string, std::size_t> kv_index_;
  std::vector<gguf_tensor_info> tensors_;
  std::unordered_map<std::string, std::size_t> tensor_index_;
};

} // namespace kvactor::model
