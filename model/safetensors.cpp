#include "model/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "base/json.hpp"

namespace kvactor::model {
namespace {

// NOTE: real headers are a few hundred KiB at most; anything near this is a
// corrupt length field, and refusing it avoids a huge allocation.
constexpr uint64_t max_header_bytes = 100u << 20;

using simdjson::ondemand::value;

result<tensor_info> parse_tensor(value v, const std::filesystem::path& file,
                                 std::string_view name) {
  tensor_info t;
  t.name = std::string(name);
  simdjson::ondemand::object obj;
  if (v.get_object().get(obj)) return tensor_error(file, name, "header entry is not an object");
  bool has_dtype = false, has_shape = false, has_offsets = false;
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return json::parse_error(file.string(), err);
    value fv;
    if (auto err = field.value().get(fv)) return json::parse_error(file.string(), err);
    if (key == "dtype") {
      std::string_view s;
      if (fv.get_string().get(s)) return tensor_error(file, name, "'dtype' is not a string");
      t.dtype_name = std::string(s);
      has_dtype = true;
    } else if (key == "shape" || key == "data_offsets") {
      simdjson::ondemand::array arr;
      if (fv.get_array().get(arr))
        return tensor_error(file, name, "'" + std::string(key) + "' is not a list");
      std::vector<int64_t> nums;
      for (auto elem : arr) {
        int64_t n = 0;
        if (elem.get_int64().get(n) || n < 0)
          return tensor_error(file, name,
                              "'" + std::string(key) +
                                "' holds a value that is not a non-negative integer");
        nums.push_back(n);
      }
      if (key == "shape") {
        t.shape = std::move(nums);
        has_shape = true;
      } else {
        if (nums.size() != 2)
          return tensor_error(file, name, "'data_offsets' must hold two integers");
        t.begin = static_cast<uint64_t>(nums[0]);
        t.end = static_cast<uint64_t>(nums[1]);
        has_offsets = true;
      }
    }
  }
  if (!has_dtype) return tensor_error(file, name, "header entry lacks 'dtype'");
  if (!has_shape) return tensor_error(file, name, "header entry lacks 'shape'");
  if (!has_offsets) return tensor_error(file, name, "header entry lacks 'data_offsets'");
  t.type = parse_dtype(t.dtype_name);
  return t;
}

status validate_extent(const tensor_info& t, const std::filesystem::path& file,
                       uint64_t data_size) {
  const auto elem = safetensors_dtype_size(t.dtype_name);
  if (!elem) return tensor_error(file, t.name, "unknown dtype '" + t.dtype_name + "'");
  if (t.begin > t.end) return tensor_error(file, t.name, "data_offsets begin after end");
  if (t.end > data_size)
    return tensor_error(file, t.name,
                        "data ends at byte " + std::to_string(t.end) +
                          " of the data section but the file holds only " +
                          std::to_string(data_size) + " (truncated file?)");
  unsigned __int128 bytes = *elem;
  for (auto d : t.shape) {
    bytes *= static_cast<uint64_t>(d);
    if (bytes > data_size) break; // already too large; avoids overflow
  }
  if (bytes != t.end - t.begin)
    return tensor_error(
      file, t.name,
      "shape and dtype need " +
        (bytes > data_size ? std::string("more") : std::to_string(static_cast<uint64_t>(bytes))) +
        " bytes but data_offsets span " + std::to_string(t.end - t.begin));
  return {};
}

} // namespace

error tensor_error(const std::filesystem::path& file, std::string_view name,
                   std::string_view what) {
  std::string m = "tensor '";
  m += name;
  m += "': ";
  m += what;
  return error_in(file.string(), m);
}

int64_t tensor_info::num_elements() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

int64_t tensor_ref::num_elements() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

result<safetensors_file> safetensors_file::open(const std::filesystem::path& path) {
  auto mapped = mapped_file::open(path);
  if (!mapped) return mapped.error();
  const auto bytes = mapped->bytes();
  const std::string where = path.string();
  if (bytes.size() < 8)
    return error_in(where, "truncated safetensors file (" + std::to_string(bytes.size()) +
                                 " bytes, shorter than the 8-byte header length)");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<uint8_t>(bytes[i]);
  if (header_len > max_header_bytes)
    return error_in(where, "safetensors header length " + std::to_string(header_len) +
                               " is not plausible");
  if (header_len > bytes.size() - 8)
    return error_in(where, "truncated safetensors file (header length " +
                               std::to_string(header_len) + " but only " +
                               std::to_string(bytes.size() - 8) + " bytes follow)");
  if (header_len < 2 || static_cast<char>(bytes[8]) != '{')
    return error_in(where, "bad safetensors header (does not start with '{')");

  safetensors_file f;
  f.path_ = path;
  f.data_offset_ = 8 + header_len;
  const uint64_t data_size = bytes.size() - f.data_offset_;
  const simdjson::padded_string header(reinterpret_cast<const char*>(bytes.data() + 8), header_len);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  const std::string header_where = where + " (safetensors header)";
  if (auto err = parser.iterate(header).get(doc)) return json::parse_error(header_where, err);
  simdjson::ondemand::object obj;
  if (auto err = doc.get_object().get(obj)) return json::parse_error(header_where, err);
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return json::parse_error(header_where, err);
    value v;
    if (auto err = field.value().get(v)) return json::parse_error(header_where, err);
    if (key == "__metadata__") continue;
    if (f.by_name_.count(std::string(key)) != 0)
      return tensor_error(path, key, "listed twice in the header");
    auto t = parse_tensor(v, path, key);
    if (!t) return t.error();
    if (auto ok = validate_extent(*t, path, data_size); !ok) return ok.error();
    f.by_name_.emplace(t->name, f.tensors_.size());
    f.tensors_.push_back(std::move(*t));
  }
  // NOTE: trailing spaces are allowed padding in the header; anything else is not.
  if (auto end = json::expect_end(doc, header_where); !end) return end.error();

  std::vector<const tensor_info*> sorted;
  for (const auto& t : f.tensors_) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->begin < sorted[i - 1]->end)
      return tensor_error(path, sorted[i]->name, "overlaps tensor '" + sorted[i - 1]->name + "'");
  f.file_ = std::move(*mapped);
  return f;
}

const tensor_info* safetensors_file::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::byte> safetensors_file::data(const tensor_info& t) const {
  return file_.bytes().subspan(data_offset_ + t.begin, t.end - t.begin);
}

status safetensors_set::add(safetensors_file file) {
  const std::size_t fi = files_.size();
  for (std::size_t ti = 0; ti < file.tensors().size(); ++ti) {
    const auto& name = file.tensors()[ti].name;
    auto [it, inserted] = index_.emplace(name, std::pair{fi, ti});
    if (!inserted)
      return tensor_error(file.path(), name,
                          "also present in " + files_[it->second.first].path().string());
  }
  files_.push_back(std::move(file));
  return {};
}

result<safetensors_set>
safetensors_set::open_files(const std::vector<std::filesystem::path>& files) {
  safetensors_set set;
  if (files.empty()) return error_in("safetensors", "no files given");
  set.where_ = files.front().string();
  for (const auto& p : files) {
    auto f = safetensors_file::open(p);
    if (!f) return f.error();
    if (auto ok = set.add(std::move(*f)); !ok) return ok.error();
  }
  return set;
}

result<safetensors_set> safetensors_set::open_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return error_in(dir.string(), "not a directory");
  const auto index_path = dir / "model.safetensors.index.json";
  if (!std::filesystem::exists(index_path, ec)) {
    std::vector<std::filesystem::path> files;
    // NOTE: increment(ec), not range-for: operator++ throws on I/O errors.
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".safetensors") files.push_back(it->path());
    if (ec) return error_in(dir.string(), "cannot list the folder: " + ec.message());
    if (files.empty()) return error_in(dir.string(), "no *.safetensors file in the model folder");
    std::sort(files.begin(), files.end());
    auto set = open_files(files);
    if (set) set->where_ = dir.string();
    return set;
  }

  const std::string where = index_path.string();
  auto text = json::read_file(index_path);
  if (!text) return text.error();
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(*text).get(doc)) return json::parse_error(where, err);
  simdjson::ondemand::object obj;
  if (auto err = doc.get_object().get(obj)) return json::parse_error(where, err);
  std::vector<std::pair<std::string, std::string>> weight_map; // tensor, file name
  bool has_map = false;
  for (auto field : obj) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return json::parse_error(where, err);
    if (key != "weight_map") continue;
    has_map = true;
    simdjson::ondemand::object map;
    if (field.value().get_object().get(map))
      return json::key_error(where, "weight_map", "expected an object");
    for (auto entry : map) {
      std::string_view tensor, file;
      if (auto err = entry.unescaped_key().get(tensor)) return json::parse_error(where, err);
      if (entry.value().get_string().get(file))
        return json::key_error(where, "weight_map." + std::string(tensor), "expected a file name");
      weight_map.emplace_back(std::string(tensor), std::string(file));
    }
  }
  if (auto end = json::expect_end(doc, where); !end) return end.error();
  if (!has_map) return json::key_error(where, "weight_map", "missing");

  std::vector<std::filesystem::path> files;
  std::set<std::string> seen;
  for (const auto& [tensor, file] : weight_map) {
    const std::filesystem::path fp(file);
    if (fp.has_parent_path() || fp.is_absolute() || file == "..")
      return json::key_error(where, "weight_map." + tensor,
                             "file '" + file + "' is not a plain file name");
    if (seen.insert(file).second) files.push_back(dir / fp);
  }
  if (files.empty()) return json::key_error(where, "weight_map", "is empty");
  auto set = open_files(files);
  if (!set) return set.error();
  set->where_ = dir.string();
  for (const auto& [tensor, file] : weight_map) {
    auto it = set->index_.find(tensor);
    if (it == set->index_.end() || set->files_[it->second.first].path().filename() != file)
      return tensor_error(dir / file, tensor,
                          "named by model.safetensors.index.json but not in this file");
  }
  return set;
}

bool safetensors_set::contains(std::string_view name) const {
  return index_.count(std::string(name)) != 0;
}

result<tensor_ref> safetensors_set::get(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return error_in(where_, "tensor '" + std::string(name) + "': missing");
  const auto& file = files_[it->second.first];
  const auto& t = file.tensors()[it->second.second];
  if (!t.type)
    return tensor_error(file.path(), name,
                        "unsupported dtype '" + t.dtype_name +
                          "' (kvactor loads BF16, F16 and F32)");
  tensor_ref r;
  r.name = t.name;
  r.file = &file.path();
  r.type = *t.type;
  r.shape = t.shape;
  r.bytes = file.data(t);
  return r;
}

std::vector<std::string> safetensors_set::names() const {
  std::vector<std::string> out;
  out.reserve(index_.size());
  for (const auto& [name, loc] : index_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<float> to_f32(const tensor_ref& t) {
  std::vector<float> out(static_cast<std::size_t>(t.num_elements()));
  convert_to_f32(t.bytes.data(), t.type, out);
  return out;
}

} // namespace kvactor::model
