#include "model/tiny/tiny_model.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "model/safetensors_writer.hpp"

namespace kvactor::model::tiny {
namespace {

std::string shard_name(int64_t i, int64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05lld-of-%05lld.safetensors",
                static_cast<long long>(i + 1), static_cast<long long>(n));
  return buf;
}

} // namespace

status write_weights(const std::filesystem::path& file, const tiny_options& o) {
  safetensors_writer w;
  w.set_metadata("format", "pt");
  for (const auto& spec : tensor_specs(o)) {
    const auto values = tensor_values(o, spec);
    w.add_f32(spec.name, o.on_disk, spec.shape, values);
  }
  return w.write(file);
}

status write_sharded_weights(const std::filesystem::path& dir, const tiny_options& o) {
  const auto specs = tensor_specs(o);
  int64_t total = 0;
  for (const auto& spec : specs) {
    int64_t n = 1;
    for (auto d : spec.shape) n *= d;
    total += n * static_cast<int64_t>(dtype_size(o.on_disk));
  }
  const int64_t per_shard = (total + o.num_shards - 1) / o.num_shards;
  std::vector<std::pair<std::string, std::string>> weight_map; // tensor, file
  int64_t shard = 0, in_shard = 0;
  safetensors_writer w;
  w.set_metadata("format", "pt");
  auto flush = [&]() -> status {
    auto ok = w.write(dir / shard_name(shard, o.num_shards));
    w = safetensors_writer{};
    w.set_metadata("format", "pt");
    in_shard = 0;
    ++shard;
    return ok;
  };
  for (const auto& spec : specs) {
    const auto values = tensor_values(o, spec);
    const auto bytes = static_cast<int64_t>(values.size() * dtype_size(o.on_disk));
    // NOTE: a tensor never spans files; a shard is closed once it is full,
    // keeping the last shard for whatever remains.
    if (in_shard > 0 && in_shard + bytes > per_shard && shard + 1 < o.num_shards)
      if (auto ok = flush(); !ok) return ok;
    w.add_f32(spec.name, o.on_disk, spec.shape, values);
    weight_map.emplace_back(spec.name, shard_name(shard, o.num_shards));
    in_shard += bytes;
  }
  if (auto ok = flush(); !ok) return ok;
  // Empty shards (more shards than tensors allow) are still written, so that
  // every file the names promise exists.
  while (shard < o.num_shards)
    if (auto ok = flush(); !ok) return ok;

  std::sort(weight_map.begin(), weight_map.end());
  std::string index = "{\n  \"metadata\": {\n    \"total_size\": " + std::to_string(total) +
                      "\n  },\n  \"weight_map\": {";
  for (std::size_t i = 0; i < weight_map.size(); ++i) {
    index += i ? ",\n    " : "\n    ";
    index += json::quote(weight_map[i].first);
    index += ": ";
    index += json::quote(weight_map[i].second);
  }
  index += "\n  }\n}\n";
  std::ofstream out(dir / "model.safetensors.index.json", std::ios::binary | std::ios::trunc);
  out << index;
  out.close();
  if (!out) return error_in((dir / "model.safetensors.index.json").string(), "write failed");
  return {};
}

} // namespace kvactor::model::tiny
