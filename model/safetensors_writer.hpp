#pragma once
// Writes a .safetensors file: what kvactor-make-tiny and the tests use to
// produce checkpoints in the exact on-disk format of real ones.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "model/dtype.hpp"
#include "base/result.hpp"

namespace kvactor::model {

class safetensors_writer {
public:
  // Adds a tensor; `bytes` holds product(shape) elements of `type`.
  void add(std::string name, dtype type, std::vector<int64_t> shape, std::vector<std::byte> bytes);
  // Adds fp32 values stored as `type` (rounded to nearest even).
  void add_f32(std::string name, dtype type, std::vector<int64_t> shape,
               std::span<const float> values);
  void set_metadata(std::string key, std::string value);

  // Header then data, tensors in the order added; the header is padded with
  // spaces to a multiple of 8 bytes as the reference writer does.
  status write(const std::filesystem::path& path) const;

  std::size_t num_tensors() const { return tensors_.size(); }

private:
  struct entry {
    std::string name;
    dtype type;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
  };
  std::vector<entry> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

} // namespace kvactor::model
