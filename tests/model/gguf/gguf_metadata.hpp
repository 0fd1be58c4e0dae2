#pragma once
// GGUF metadata for the tokenizer tests: keys set, replaced and removed in
// any order before the file is written (gguf_writer takes each key once).

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/gguf/gguf_file.hpp"
#include "model/gguf/gguf_writer.hpp"
#include "tests/model/gguf/gguf_test_bytes.hpp"

namespace kvactor::model::test_support {

class gguf_metadata {
public:
  void set(const std::string& key, gguf_encoded v) {
    erase(key);
    kvs_.emplace_back(key, std::move(v));
  }
  void erase(const std::string& key) {
    std::erase_if(kvs_, [&](const auto& kv) { return kv.first == key; });
  }
  void set_strings(const std::string& key, const std::vector<std::string>& v) {
    std::vector<gguf_encoded> items;
    items.reserve(v.size());
    for (const auto& s : v) items.push_back(gguf_encoded::string(s));
    set(key, gguf_encoded::array(gguf_value_type::string, items));
  }
  void set_i32s(const std::string& key, std::span<const int32_t> v) {
    std::vector<gguf_encoded> items;
    for (int32_t x : v) items.push_back(gguf_encoded::i32(x));
    set(key, gguf_encoded::array(gguf_value_type::i32, items));
  }
  void set_f32s(const std::string& key, std::span<const float> v) {
    std::vector<gguf_encoded> items;
    for (float x : v) items.push_back(gguf_encoded::f32(x));
    set(key, gguf_encoded::array(gguf_value_type::f32, items));
  }

  std::string serialize() const {
    gguf_writer w;
    w.add_string("general.architecture", "llama");
    for (const auto& [k, v] : kvs_) w.add(k, v);
    return w.serialize();
  }
  // The file, written to `dir`/m.gguf and opened.
  result<gguf_file> open(const temp_dir& dir) const { return open_bytes(dir, serialize()); }

private:
  std::vector<std::pair<std::string, gguf_encoded>> kvs_;
};

} // namespace kvactor::model::test_support
