#include "model/gguf/gguf_file.hpp"

#include <algorithm>
#include <cstring>

namespace kvactor::model {
namespace {

constexpr uint64_t header_bytes = 24; // magic, version, two counts
// NOTE: the fewest bytes one entry can take, to refuse absurd counts before
// reserving: a key/value pair is an empty key (8), a type (4) and a u8 (1); a
// tensor info an empty name (8), num_dims (4), a type (4) and an offset (8).
constexpr uint64_t min_kv_bytes = 13;
constexpr uint64_t min_tensor_info_bytes = 24;
// ggml's GGML_MAX_DIMS: no GGUF reader accepts more.
constexpr uint32_t max_dims = 4;

error tensor_error(const std::filesystem::path& file, std::string_view name,
                   std::string_view what) {
  return error_in(file.string(), "tensor '" + std::string(name) + "': " + std::string(what));
}

status check_count(const std::filesystem::path& file, std::string_view what, uint64_t count,
                   uint64_t min_bytes, uint64_t remaining) {
  if (count <= remaining / min_bytes) return {};
  return error_in(file.string(), "header claims " + std::to_string(count) + " " +
                                     std::string(what) + " but only " +
                                     std::to_string(remaining) +
                                     " bytes follow (corrupt or truncated file?)");
}

status check_version(const std::filesystem::path& file, uint32_t version) {
  if (version == 2 || version == 3) return {};
  const uint32_t swapped = ((version & 0xffu) << 24) | ((version & 0xff00u) << 8) |
                           ((version >> 8) & 0xff00u) | (version >> 24);
  if (swapped >= 1 && swapped <= 3)
    return error_in(file.string(), "big-endian GGUF file (version " + std::to_string(swapped) +
                                       " with its bytes swapped); kvactor reads little-endian "
                                       "files only");
  return error_in(file.string(), "unsupported GGUF version " + std::to_string(version) +
                                     " (kvactor reads versions 2 and 3)");
}

// The bytes of a tensor of type `t` and `dims`, at most `limit`, or what is wrong.
result<uint64_t> tensor_bytes(ggml_type t, const std::vector<uint64_t>& dims, uint64_t limit) {
  const uint64_t row = dims.empty() ? 1 : dims[0];
  if (row % ggml_block_size(t) != 0)
    return error{"row length " + std::to_string(row) + " is not a multiple of " +
                 std::string(ggml_type_name(t)) + "'s block size " +
                 std::to_string(ggml_block_size(t))};
  const auto bytes = ggml_tensor_bytes(t, dims);
  if (!bytes || *bytes > limit)
    return error{"needs " + (bytes ? std::to_string(*bytes) : std::string("over 2^64")) +
                 " bytes, more than the " + std::to_string(limit) +
                 "-byte data section holds (truncated file?)"};
  return *bytes;
}

result<gguf_tensor_info> read_tensor_info(gguf_cursor& in, const std::filesystem::path& file,
                                          uint64_t index) {
  gguf_tensor_info t;
  std::string_view name;
  const std::string nth = "tensor info #" + std::to_string(index);
  if (!in.read_string(name))
    return error_in(file.string(), "truncated tensor table: " + nth + "'s name");
  t.name = std::string(name);
  uint32_t num_dims = 0;
  if (!in.read_u32(num_dims)) return tensor_error(file, name, "truncated tensor table");
  if (num_dims > max_dims)
    return tensor_error(file, name, std::to_string(num_dims) + " dimensions (at most " +
                                      std::to_string(max_dims) + ")");
  t.dims.resize(num_dims);
  for (auto& d : t.dims) {
    if (!in.read_u64(d)) return tensor_error(file, name, "truncated tensor table");
    if (d > static_cast<uint64_t>(INT64_MAX))
      return tensor_error(file, name, "dimension " + std::to_string(d) + " is not plausible");
  }
  uint32_t type_id = 0;
  if (!in.read_u32(type_id) || !in.read_u64(t.offset))
    return tensor_error(file, name, "truncated tensor table");
  const auto type = ggml_type_from_id(type_id);
  if (!type) return tensor_error(file, name, "unknown ggml type id " + std::to_string(type_id));
  t.type = *type;
  return t;
}

} // namespace

uint64_t gguf_tensor_info::num_elements() const {
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

result<gguf_file> gguf_file::open(const std::filesystem::path& path) {
  auto mapped = mapped_file::open(path);
  if (!mapped) return mapped.error();
  const std::string where = path.string();
  gguf_cursor in(mapped->bytes());
  std::span<const std::byte> magic;
  if (!in.take(4, magic) || std::memcmp(magic.data(), "GGUF", 4) != 0)
    return error_in(where, "not a GGUF file (the first bytes are not \"GGUF\")");
  gguf_file f;
  f.path_ = path;
  uint64_t num_tensors = 0, num_kvs = 0;
  if (!in.read_u32(f.version_))
    return error_in(where, "truncated header (" + std::to_string(in.size()) + " bytes)");
  if (auto ok = check_version(path, f.version_); !ok) return ok.error();
  if (!in.read_u64(num_tensors) || !in.read_u64(num_kvs))
    return error_in(where, "truncated header (" + std::to_string(in.size()) + " bytes, " +
                               std::to_string(header_bytes) + " needed)");
  if (auto ok = check_count(path, "metadata pairs", num_kvs, min_kv_bytes, in.remaining()); !ok)
    return ok.error();
  if (auto ok = check_count(path, "tensors", num_tensors, min_tensor_info_bytes, in.remaining());
      !ok)
    return ok.error();

  f.kvs_.reserve(num_kvs);
  for (uint64_t i = 0; i < num_kvs; ++i) {
    std::string_view key;
    uint32_t type_id = 0;
    if (!in.read_string(key))
      return error_in(where, "truncated metadata: key #" + std::to_string(i));
    if (!in.read_u32(type_id)) return f.key_error(key, "truncated metadata (no value type)");
    const auto type = gguf_value_type_from_id(type_id);
    if (!type) return f.key_error(key, "unknown value type id " + std::to_string(type_id));
    auto value = gguf_value::parse(in, *type);
    if (!value) return f.key_error(key, value.error().message);
    if (!f.kv_index_.emplace(std::string(key), f.kvs_.size()).second)
      return f.key_error(key, "listed twice in the metadata");
    f.kvs_.push_back({std::string(key), *value});
  }
  if (f.contains("general.alignment")) {
    auto a = f.uint("general.alignment");
    if (!a) return a.error();
    if (*a == 0 || (*a & (*a - 1)) != 0 || *a > (1u << 30))
      return f.key_error("general.alignment",
                         std::to_string(*a) + " is not a power of two (at most 2^30)");
    f.alignment_ = *a;
  }

  if (auto ok = check_count(path, "tensors", num_tensors, min_tensor_info_bytes, in.remaining());
      !ok)
    return ok.error();
  f.tensors_.reserve(num_tensors);
  for (uint64_t i = 0; i < num_tensors; ++i) {
    auto t = read_tensor_info(in, path, i);
    if (!t) return t.error();
    if (!f.tensor_index_.emplace(t->name, f.tensors_.size()).second)
      return tensor_error(path, t->name, "listed twice in the tensor table");
    f.tensors_.push_back(std::move(*t));
  }
  // NOTE: the file may end right after the tensor table when it holds no
  // tensor data; otherwise the data section starts at the next aligned byte.
  f.data_offset_ = (in.pos() + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  const uint64_t data_size = in.size() > f.data_offset_ ? in.size() - f.data_offset_ : 0;
  for (auto& t : f.tensors_) {
    auto bytes = tensor_bytes(t.type, t.dims, data_size);
    if (!bytes) return tensor_error(path, t.name, bytes.error().message);
    t.num_bytes = *bytes;
    if (t.offset % f.alignment_ != 0)
      return tensor_error(path, t.name, "offset " + std::to_string(t.offset) +
                                          " is not a multiple of the alignment " +
                                          std::to_string(f.alignment_));
    if (t.offset > data_size || t.num_bytes > data_size - t.offset)
      return tensor_error(path, t.name,
                          "data [" + std::to_string(t.offset) + ", +" +
                            std::to_string(t.num_bytes) + ") runs past the end of the " +
                            std::to_string(data_size) + "-byte data section (truncated file?)");
  }
  std::vector<const gguf_tensor_info*> sorted;
  for (const auto& t : f.tensors_)
    if (t.num_bytes > 0) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->offset < sorted[i - 1]->offset + sorted[i - 1]->num_bytes)
      return tensor_error(path, sorted[i]->name, "overlaps tensor '" + sorted[i - 1]->name + "'");
  f.file_ = std::move(*mapped);
  return f;
}

const gguf_value* gguf_file::find_key(std::string_view key) const {
  auto it = kv_index_.find(std::string(key));
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

const gguf_tensor_info* gguf_file::find(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const std::byte* gguf_file::data(const gguf_tensor_info& t) const {
  // NOTE: min(): a file of empty tensors may end before its data section.
  return file_.bytes().data() + std::min<uint64_t>(data_offset_ + t.offset, file_.size());
}

error gguf_file::key_error(std::string_view key, std::string_view what) const {
  return error_in(path_.string(), "key '" + std::string(key) + "': " + std::string(what));
}

result<const gguf_value*> gguf_file::typed(std::string_view key, gguf_value_type type) const {
  const gguf_value* v = find_key(key);
  if (!v) return key_error(key, "missing");
  if (v->type() != type)
    return key_error(key, "expected " + std::string(gguf_value_type_name(type)) + ", found " +
                            v->type_name());
  return v;
}

result<const gguf_value*> gguf_file::typed_array(std::string_view key,
                                                 gguf_value_type elem) const {
  auto v = typed(key, gguf_value_type::array);
  if (v && (*v)->element_type() != elem)
    return key_error(key, "expected array of " + std::string(gguf_value_type_name(elem)) +
                            ", found " + (*v)->type_name());
  return v;
}

result<uint32_t> gguf_file::u32(std::string_view key) const {
  auto v = typed(key, gguf_value_type::u32);
  if (!v) return v.error();
  return static_cast<uint32_t>(*(*v)->to_unsigned());
}

result<uint64_t> gguf_file::u64(std::string_view key) const {
  auto v = typed(key, gguf_value_type::u64);
  if (!v) return v.error();
  return *(*v)->to_unsigned();
}

result<int32_t> gguf_file::i32(std::string_view key) const {
  auto v = typed(key, gguf_value_type::i32);
  if (!v) return v.error();
  return static_cast<int32_t>(*(*v)->to_signed());
}

result<float> gguf_file::f32(std::string_view key) const {
  auto v = typed(key, gguf_value_type::f32);
  if (!v) return v.error();
  return static_cast<float>(*(*v)->to_double());
}

result<bool> gguf_file::boolean(std::string_view key) const {
  auto v = typed(key, gguf_value_type::boolean);
  if (!v) return v.error();
  return *(*v)->to_bool();
}

result<std::string> gguf_file::str(std::string_view key) const {
  auto v = typed(key, gguf_value_type::string);
  if (!v) return v.error();
  return std::string(*(*v)->to_string());
}

result<uint64_t> gguf_file::uint(std::string_view key) const {
  const gguf_value* v = find_key(key);
  if (!v) return key_error(key, "missing");
  if (!is_integer(v->type()))
    return key_error(key, "expected an integer, found " + v->type_name());
  const auto u = v->to_unsigned();
  if (!u)
    return key_error(key, "expected a non-negative integer, found " + v->type_name() + " " +
                            std::to_string(*v->to_signed()));
  return *u;
}

result<double> gguf_file::number(std::string_view key) const {
  const gguf_value* v = find_key(key);
  if (!v) return key_error(key, "missing");
  const auto d = v->to_double();
  if (!d) return key_error(key, "expected float32 or float64, found " + v->type_name());
  return *d;
}

result<uint64_t> gguf_file::array_size(std::string_view key) const {
  auto v = typed(key, gguf_value_type::array);
  if (!v) return v.error();
  return (*v)->size();
}

result<std::vector<std::string>> gguf_file::string_array(std::string_view key) const {
  auto v = typed_array(key, gguf_value_type::string);
  if (!v) return v.error();
  std::vector<std::string> out;
  out.reserve((*v)->size());
  for (const auto& e : (*v)->elements()) out.emplace_back(*e.to_string());
  return out;
}

result<std::vector<float>> gguf_file::f32_array(std::string_view key) const {
  auto v = typed_array(key, gguf_value_type::f32);
  if (!v) return v.error();
  std::vector<float> out;
  out.reserve((*v)->size());
  for (const auto& e : (*v)->elements()) out.push_back(static_cast<float>(*e.to_double()));
  return out;
}

result<std::vector<int32_t>> gguf_file::i32_array(std::string_view key) const {
  auto v = typed_array(key, gguf_value_type::i32);
  if (!v) return v.error();
  std::vector<int32_t> out;
  out.reserve((*v)->size());
  for (const auto& e : (*v)->elements()) out.push_back(static_cast<int32_t>(*e.to_signed()));
  return out;
}

} // namespace kvactor::model
