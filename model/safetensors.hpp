#pragma once
// Reading .safetensors files through mmap.
//
// File layout (https://huggingface.co/docs/safetensors):
//
//   [ u64 little-endian N ][ N bytes JSON header ][ data ............ ]
//                           {"name": {"dtype": "BF16", "shape": [r, c],
//                                     "data_offsets": [begin, end]}, ...,
//                            "__metadata__": {...}}
//
// data_offsets are relative to the start of the data. Every tensor is
// validated when the file is opened: offsets inside the file, byte size =
// product(shape) * element size, no two tensors overlapping.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/dtype.hpp"
#include "base/result.hpp"
#include "model/mapped_file.hpp"

namespace kvactor::model {

struct tensor_info {
  std::string name;
  std::string dtype_name;   // as written in the header, e.g. "BF16", "I64"
  std::optional<dtype> type; // nullopt: a dtype kvactor does not load
  std::vector<int64_t> shape;
  uint64_t begin = 0; // byte offsets relative to the data section
  uint64_t end = 0;

  int64_t num_elements() const;
};

// One mapped .safetensors file with its validated header.
class safetensors_file {
public:
  static result<safetensors_file> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  // In header order.
  const std::vector<tensor_info>& tensors() const { return tensors_; }
  const tensor_info* find(std::string_view name) const;
  // The tensor's bytes inside the mapping (no alignment guarantee).
  std::span<const std::byte> data(const tensor_info& t) const;

  void drop_pages() const { file_.drop_pages(); }

private:
  std::filesystem::path path_;
  mapped_file file_;
  std::size_t data_offset_ = 0;
  std::vector<tensor_info> tensors_;
  std::unordered_map<std::string, std::size_t> by_name_;
};

// A tensor of a supported dtype, pointing into a mapped file. Valid while the
// safetensors_set that returned it lives.
struct tensor_ref {
  std::string_view name;
  const std::filesystem::path* file = nullptr;
  dtype type = dtype::f32;
  std::span<const int64_t> shape;
  std::span<const std::byte> bytes; // num_elements() * dtype_size(type)

  int64_t num_elements() const;
};

// All tensors of a checkpoint: one file, or several tied together by
// model.safetensors.index.json.
class safetensors_set {
public:
  // Opens `dir`/model.safetensors.index.json and the files it names when it
  // exists, else every `dir`/*.safetensors.
  static result<safetensors_set> open_folder(const std::filesystem::path& dir);
  static result<safetensors_set> open_files(const std::vector<std::filesystem::path>& files);

  std::size_t num_files() const { return files_.size(); }
  // mapped_file::drop_pages of every file.
  void drop_pages() const {
    for (const safetensors_file& f : files_) f.drop_pages();
  }
  std::size_t num_tensors() const { return index_.size(); }
  bool contains(std::string_view name) const;
  // Errors: missing tensor, unsupported dtype (naming file and tensor).
  result<tensor_ref> get(std::string_view name) const;
  // Tensor names, sorted.
  std::vector<std::string> names() const;
  // The folder (or first file) the set was opened from, for messages.
  const std::string& source() const { return where_; }

private:
  status add(safetensors_file file);

  std::vector<safetensors_file> files_;
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> index_; // file, tensor
  std::string where_; // folder or first file, for "missing tensor" errors
};

// "<file>: tensor '<name>': <what>".
error tensor_error(const std::filesystem::path& file, std::string_view name, std::string_view what);

// The tensor widened (or copied) to fp32.
std::vector<float> to_f32(const tensor_ref& t);

} // namespace kvactor::model
