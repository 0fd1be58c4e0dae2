#include "model/safetensors.hpp"

#include <cstring>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/safetensors_writer.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;

// A file from a hand-written header and `num_data_bytes` zero data bytes.
void write_raw(const std::filesystem::path& p, std::string_view header,
               std::size_t num_data_bytes) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header;
  bytes += std::string(num_data_bytes, '\0');
  test_support::write_file(p, bytes);
}

std::string open_error(const std::filesystem::path& p) {
  auto r = safetensors_file::open(p);
  EXPECT_FALSE(r);
  return r ? std::string() : r.error().message;
}

TEST(safetensors, writer_output_reads_back) {
  temp_dir dir;
  safetensors_writer w;
  w.set_metadata("format", "pt");
  const std::vector<float> a = {1.0f, -2.0f, 0.5f, 3.25f, 0.0f, -0.125f};
  w.add_f32("a.bf16", dtype::bf16, {2, 3}, a);
  w.add_f32("a.f16", dtype::f16, {3, 2}, a);
  w.add_f32("a.f32", dtype::f32, {6}, a);
  ASSERT_TRUE(w.write(dir / "m.safetensors"));

  auto set = safetensors_set::open_folder(dir.path());
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->num_files(), 1u);
  EXPECT_EQ(set->num_tensors(), 3u);
  EXPECT_EQ(set->names(), (std::vector<std::string>{"a.bf16", "a.f16", "a.f32"}));
  for (auto [name, type] :
       {std::pair{"a.bf16", dtype::bf16}, {"a.f16", dtype::f16}, {"a.f32", dtype::f32}}) {
    auto t = set->get(name);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(t->type, type);
    EXPECT_EQ(t->num_elements(), 6);
    EXPECT_EQ(t->bytes.size(), 6 * dtype_size(type));
    EXPECT_EQ(to_f32(*t), a) << name; // every value is exact in all three dtypes
  }
  auto t = set->get("a.bf16");
  EXPECT_EQ(std::vector<int64_t>(t->shape.begin(), t->shape.end()), (std::vector<int64_t>{2, 3}));
  uint16_t first;
  std::memcpy(&first, t->bytes.data(), 2);
  EXPECT_EQ(first, 0x3f80); // 1.0 in bf16, stored as is
}

TEST(safetensors, missing_tensor_names_it) {
  temp_dir dir;
  safetensors_writer w;
  w.add_f32("x", dtype::f32, {1}, std::vector<float>{1});
  ASSERT_TRUE(w.write(dir / "m.safetensors"));
  auto set = safetensors_set::open_folder(dir.path());
  ASSERT_TRUE(set);
  auto t = set->get("model.norm.weight");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr("tensor 'model.norm.weight': missing"));
  EXPECT_THAT(t.error().message, HasSubstr(dir.path().string()));
}

TEST(safetensors, unsupported_dtype_names_file_and_tensor) {
  temp_dir dir;
  write_raw(dir / "m.safetensors", R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})",
            16);
  auto set = safetensors_set::open_folder(dir.path());
  ASSERT_TRUE(set) << set.error().message; // other dtypes may sit beside the weights
  auto t = set->get("ids");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr((dir / "m.safetensors").string()));
  EXPECT_THAT(t.error().message, HasSubstr("tensor 'ids': unsupported dtype 'I64'"));

  write_raw(dir / "n.safetensors", R"({"q":{"dtype":"Q4_K","shape":[2],"data_offsets":[0,1]}})", 1);
  EXPECT_THAT(open_error(dir / "n.safetensors"), HasSubstr("tensor 'q': unknown dtype 'Q4_K'"));
}

TEST(safetensors, truncated_files) {
  temp_dir dir;
  test_support::write_file(dir / "a.safetensors", "abc");
  EXPECT_THAT(open_error(dir / "a.safetensors"), HasSubstr("truncated safetensors file"));
  test_support::write_file(dir / "b.safetensors", "");
  EXPECT_THAT(open_error(dir / "b.safetensors"), HasSubstr("truncated safetensors file"));

  // A real file cut in the middle of its data.
  safetensors_writer w;
  w.add_f32("w", dtype::f32, {4, 4}, std::vector<float>(16, 1.0f));
  ASSERT_TRUE(w.write(dir / "c.safetensors"));
  std::filesystem::resize_file(dir / "c.safetensors",
                               std::filesystem::file_size(dir / "c.safetensors") - 10);
  const auto msg = open_error(dir / "c.safetensors");
  EXPECT_THAT(msg, HasSubstr((dir / "c.safetensors").string()));
  EXPECT_THAT(msg, HasSubstr("tensor 'w'"));
  EXPECT_THAT(msg, HasSubstr("truncated"));

  // Cut inside the header.
  ASSERT_TRUE(w.write(dir / "d.safetensors"));
  std::filesystem::resize_file(dir / "d.safetensors", 20);
  EXPECT_THAT(open_error(dir / "d.safetensors"), HasSubstr("header length"));
}

TEST(safetensors, bad_headers) {
  temp_dir dir;
  const auto p = dir / "m.safetensors";
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})", 16); // unbalanced
  EXPECT_THAT(open_error(p), HasSubstr("invalid JSON"));
  write_raw(p, R"([1,2,3])", 0);
  EXPECT_THAT(open_error(p), HasSubstr("bad safetensors header"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 16);
  EXPECT_THAT(open_error(p),
              HasSubstr("tensor 'w': shape and dtype need 16 bytes but data_offsets span 12"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2,-2],"data_offsets":[0,16]}})", 16);
  EXPECT_THAT(open_error(p), HasSubstr("tensor 'w': 'shape'"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2,2]}})", 16);
  EXPECT_THAT(open_error(p), HasSubstr("tensor 'w': header entry lacks 'data_offsets'"));
  write_raw(p, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            12);
  EXPECT_THAT(open_error(p), HasSubstr("tensor 'b': overlaps tensor 'a'"));
  // A header length field of 2^40.
  std::string huge(8, '\0');
  huge[5] = 1;
  test_support::write_file(p, huge + "{}");
  EXPECT_THAT(open_error(p), HasSubstr("not plausible"));
}

TEST(safetensors, sharded_checkpoint_with_index) {
  temp_dir dir;
  safetensors_writer w1, w2;
  w1.add_f32("model.a", dtype::f32, {2}, std::vector<float>{1, 2});
  w2.add_f32("model.b", dtype::bf16, {2}, std::vector<float>{3, 4});
  ASSERT_TRUE(w1.write(dir / "model-00001-of-00002.safetensors"));
  ASSERT_TRUE(w2.write(dir / "model-00002-of-00002.safetensors"));
  test_support::write_file(dir / "model.safetensors.index.json", R"({
    "metadata": {"total_size": 12},
    "weight_map": {"model.a": "model-00001-of-00002.safetensors",
                   "model.b": "model-00002-of-00002.safetensors"}})");
  auto set = safetensors_set::open_folder(dir.path());
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->num_files(), 2u);
  EXPECT_EQ(to_f32(*set->get("model.b")), (std::vector<float>{3, 4}));
  EXPECT_EQ(set->get("model.b")->file->filename(), "model-00002-of-00002.safetensors");

  test_support::write_file(dir / "model.safetensors.index.json", R"({
    "weight_map": {"model.a": "model-00001-of-00002.safetensors",
                   "model.b": "model-00001-of-00002.safetensors"}})");
  auto bad = safetensors_set::open_folder(dir.path());
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("tensor 'model.b': named by model.safetensors.index.json"));

  test_support::write_file(dir / "model.safetensors.index.json",
                           R"({"weight_map": {"model.a": "gone.safetensors"}})");
  auto gone = safetensors_set::open_folder(dir.path());
  ASSERT_FALSE(gone);
  EXPECT_THAT(gone.error().message, HasSubstr("gone.safetensors"));
}

TEST(safetensors, duplicate_tensor_across_files) {
  temp_dir dir;
  safetensors_writer w;
  w.add_f32("x", dtype::f32, {1}, std::vector<float>{1});
  ASSERT_TRUE(w.write(dir / "a.safetensors"));
  ASSERT_TRUE(w.write(dir / "b.safetensors"));
  auto set = safetensors_set::open_folder(dir.path());
  ASSERT_FALSE(set);
  EXPECT_THAT(set.error().message, HasSubstr("tensor 'x': also present in"));
}

TEST(safetensors, folder_without_weights) {
  temp_dir dir;
  auto set = safetensors_set::open_folder(dir.path());
  ASSERT_FALSE(set);
  EXPECT_THAT(set.error().message, HasSubstr("no *.safetensors file"));
}

} // namespace
} // namespace kvactor::model
