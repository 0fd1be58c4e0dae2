#include "model/safetensors_writer.hpp"
#include "base/json.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace kvactor::model {


void safetensors_writer::add(std::string name, dtype type, std::vector<int64_t> shape,
                             std::vector<std::byte> bytes) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  KVACTOR_ASSERT(static_cast<std::size_t>(n) * dtype_size(type) == bytes.size(),
                 "tensor bytes disagree with shape and dtype");
  tensors_.push_back({std::move(name), type, std::move(shape), std::move(bytes)});
}

void safetensors_writer::add_f32(std::string name, dtype type, std::vector<int64_t> shape,
                                 std::span<const float> values) {
  std::vector<std::byte> bytes(values.size() * dtype_size(type));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (type == dtype::f32) {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
    } else {
      const uint16_t h = type == dtype::bf16 ? f32_to_bf16(values[i]) : f32_to_f16(values[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  }
  add(std::move(name), type, std::move(shape), std::move(bytes));
}

void safetensors_writer::set_metadata(std::string key, std::string value) {
  metadata_.emplace_back(std::move(key), std::move(value));
}

status safetensors_writer::write(const std::filesystem::path& path) const {
  std::string header = "{";
  if (!metadata_.empty()) {
    header += "\"__metadata__\":{";
    for (std::size_t i = 0; i < metadata_.size(); ++i) {
      if (i) header += ',';
      header += json::quote(metadata_[i].first);
      header += ':';
      header += json::quote(metadata_[i].second);
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    if (i || !metadata_.empty()) header += ',';
    header += json::quote(t.name);
    header += ":{\"dtype\":\"";
    header += safetensors_name(t.type);
    header += "\",\"shape\":[";
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      if (d) header += ',';
      header += std::to_string(t.shape[d]);
    }
    header += "],\"data_offsets\":[";
    header += std::to_string(offset);
    header += ',';
    header += std::to_string(offset + t.bytes.size());
    header += "]}";
    offset += t.bytes.size();
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error_in(path.string(), "cannot create file");
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const auto& t : tensors_)
    out.write(reinterpret_cast<const char*>(t.bytes.data()),
              static_cast<std::streamsize>(t.bytes.size()));
  out.close();
  if (!out) return error_in(path.string(), "write failed");
  return {};
}

} // namespace kvactor::model
