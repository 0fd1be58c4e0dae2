// gguf_file: typed getters and the refusal of malformed or hostile files,
// each message naming the file and the key or tensor at fault.

#include "model/gguf/gguf_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/gguf/gguf_writer.hpp"
#include "tests/model/gguf/gguf_test_bytes.hpp"

namespace kvactor::model {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace test_support;

std::vector<std::byte> zeros(std::size_t n) { return std::vector<std::byte>(n); }

TEST(gguf_file, getters_name_the_key_and_both_types) {
  temp_dir dir;
  gguf_writer w;
  w.add_string("s", "text");
  w.add_i32("neg", -3);
  w.add("small", gguf_encoded::u8(7));
  w.add("wide", gguf_encoded::i64(1ll << 40));
  const std::vector<int32_t> ints = {1, 2};
  w.add_i32_array("ints", ints);
  auto f = open_bytes(dir, w.serialize());
  ASSERT_TRUE(f) << f.error().message;
  auto u = f->u32("s");
  ASSERT_FALSE(u);
  EXPECT_THAT(u.error().message, AllOf(HasSubstr((dir / "m.gguf").string()),
                                       HasSubstr("key 's': expected uint32, found string")));
  EXPECT_THAT(f->f32("missing.key").error().message, HasSubstr("key 'missing.key': missing"));
  EXPECT_THAT(f->uint("neg").error().message,
              HasSubstr("key 'neg': expected a non-negative integer, found int32 -3"));
  EXPECT_THAT(f->uint("s").error().message, HasSubstr("expected an integer, found string"));
  EXPECT_EQ(*f->uint("small"), 7u); // any width
  EXPECT_EQ(*f->uint("wide"), 1ull << 40);
  EXPECT_THAT(f->f32_array("ints").error().message,
              HasSubstr("key 'ints': expected array of float32, found array of int32"));
  EXPECT_THAT(f->string_array("s").error().message, HasSubstr("expected array, found string"));
  EXPECT_THAT(f->number("small").error().message,
              HasSubstr("expected float32 or float64, found uint8"));
  EXPECT_FALSE(f->contains("missing.key"));
  EXPECT_TRUE(f->contains("ints"));
}

TEST(gguf_file, refuses_bad_magic_and_versions) {
  temp_dir dir;
  std::string bad = header(3, 0, 0);
  bad[3] = 'X';
  EXPECT_THAT(open_error(dir, bad), HasSubstr("not a GGUF file"));
  EXPECT_THAT(open_error(dir, "GG"), HasSubstr("not a GGUF file"));
  EXPECT_THAT(open_error(dir, header(1, 0, 0)), HasSubstr("unsupported GGUF version 1"));
  EXPECT_THAT(open_error(dir, header(4, 0, 0)), HasSubstr("unsupported GGUF version 4"));
  EXPECT_THAT(open_error(dir, header(3u << 24, 0, 0)),
              AllOf(HasSubstr("big-endian"), HasSubstr("version 3")));
  auto v2 = open_bytes(dir, header(2, 0, 0));
  ASSERT_TRUE(v2) << v2.error().message;
  EXPECT_EQ(v2->version(), 2u);
}

TEST(gguf_file, refuses_truncated_header_metadata_and_tensor_table) {
  temp_dir dir;
  EXPECT_THAT(open_error(dir, header(3, 0, 0).substr(0, 20)), HasSubstr("truncated header"));
  gguf_writer w;
  w.add_string("general.name", "a model name");
  w.add_tensor("a.rather.long.tensor.name", {8}, ggml_type::f32, zeros(32));
  const std::string full = w.serialize();
  const std::size_t value_end = end_of_string(full, "a model name");
  EXPECT_THAT(open_error(dir, full.substr(0, value_end - 3)),
              AllOf(HasSubstr("key 'general.name'"), HasSubstr("truncated")));
  gguf_writer no_tensors;
  no_tensors.add_string("general.name", "x");
  EXPECT_THAT(open_error(dir, no_tensors.serialize().substr(0, 24 + 15)),
              HasSubstr("truncated metadata: key #0"));
  // The tensor count alone is plausible (24 bytes follow), its dims are cut.
  const std::size_t name_end = end_of_string(full, "a.rather.long.tensor.name");
  EXPECT_THAT(open_error(dir, full.substr(0, name_end + 4)),
              AllOf(HasSubstr("tensor 'a.rather.long.tensor.name'"),
                    HasSubstr("truncated tensor table")));
}

TEST(gguf_file, refuses_lengths_and_counts_past_the_end_before_allocating) {
  temp_dir dir;
  gguf_writer w;
  w.add_string("general.name", "x");
  std::string bytes = w.serialize();
  // The string's length field: 2^40 bytes in a file of a few dozen.
  patch(bytes, end_of_string(bytes, "general.name") + 4, 1ull << 40, 8);
  EXPECT_THAT(open_error(dir, bytes),
              AllOf(HasSubstr("key 'general.name'"), HasSubstr("needs 1099511627776 bytes")));
  EXPECT_THAT(open_error(dir, header(3, 1ull << 40, 0)),
              HasSubstr("header claims 1099511627776 tensors"));
  EXPECT_THAT(open_error(dir, header(3, 0, ~0ull)), HasSubstr("metadata pairs"));

  gguf_writer arr;
  arr.add("big.array", gguf_encoded::array(gguf_value_type::u64, {gguf_encoded::u64(1)}));
  bytes = arr.serialize();
  patch(bytes, end_of_string(bytes, "big.array") + 8, 1ull << 60, 8); // after types
  EXPECT_THAT(open_error(dir, bytes),
              AllOf(HasSubstr("key 'big.array'"), HasSubstr("array of 1152921504606846976")));
}

TEST(gguf_file, refuses_bad_values) {
  temp_dir dir;
  gguf_writer w;
  w.add_bool("flag", true);
  std::string bytes = w.serialize();
  const std::size_t type_pos = end_of_string(bytes, "flag");
  std::string bad_bool = bytes;
  patch(bad_bool, type_pos + 4, 2, 1);
  EXPECT_THAT(open_error(dir, bad_bool), AllOf(HasSubstr("key 'flag'"),
                                               HasSubstr("bool value 2 is neither 0 nor 1")));
  patch(bytes, type_pos, 13, 4);
  EXPECT_THAT(open_error(dir, bytes),
              AllOf(HasSubstr("key 'flag'"), HasSubstr("unknown value type id 13")));
  // Arrays nested nine deep, the innermost empty.
  std::string deep = header(3, 0, 1);
  put_string(deep, "deep");
  put_u32(deep, 9);
  for (int i = 0; i < 9; ++i) {
    put_u32(deep, 9);
    put_u64(deep, 1);
  }
  EXPECT_THAT(open_error(dir, deep), AllOf(HasSubstr("key 'deep'"), HasSubstr("nested deeper")));
}

// Two F32 tensors of 8 elements, "a.x" and "a.y", and the file's bytes.
std::string two_tensors(uint32_t alignment = 32) {
  gguf_writer w;
  if (alignment != 32) w.set_alignment(alignment);
  w.add_tensor("a.x", {8}, ggml_type::f32, zeros(32));
  w.add_tensor("a.y", {8}, ggml_type::f32, zeros(32));
  return w.serialize();
}

TEST(gguf_file, refuses_tensors_outside_the_file_or_misplaced) {
  temp_dir dir;
  ASSERT_TRUE(open_bytes(dir, two_tensors()));
  const std::string full = two_tensors();
  EXPECT_THAT(open_error(dir, full.substr(0, full.size() - 1)),
              AllOf(HasSubstr("tensor 'a.y'"), HasSubstr("truncated file?")));
  std::string far = full;
  patch(far, tensor_type_pos(far, "a.y", 1) + 4, 1 << 20, 8);
  EXPECT_THAT(open_error(dir, far),
              AllOf(HasSubstr("tensor 'a.y'"), HasSubstr("runs past the end")));
  std::string misaligned = full;
  patch(misaligned, tensor_type_pos(misaligned, "a.y", 1) + 4, 16, 8);
  EXPECT_THAT(open_error(dir, misaligned),
              AllOf(HasSubstr("tensor 'a.y'"),
                    HasSubstr("offset 16 is not a multiple of the alignment 32")));
  std::string overlap = full;
  patch(overlap, tensor_type_pos(overlap, "a.y", 1) + 4, 0, 8);
  EXPECT_THAT(open_error(dir, overlap), HasSubstr("overlaps tensor"));
}

TEST(gguf_file, refuses_bad_tensor_types_and_shapes) {
  temp_dir dir;
  std::string unknown = two_tensors();
  patch(unknown, tensor_type_pos(unknown, "a.y", 1), 31, 4);
  EXPECT_THAT(open_error(dir, unknown),
              AllOf(HasSubstr("tensor 'a.y'"), HasSubstr("unknown ggml type id 31")));

  gguf_writer w;
  w.add_tensor("q", {32, 2}, ggml_type::q8_0, zeros(68));
  std::string bytes = w.serialize();
  const std::size_t dims_pos = end_of_string(bytes, "q") + 4;
  patch(bytes, dims_pos, 16, 8);
  patch(bytes, dims_pos + 8, 4, 8); // 64 elements still, in rows of 16
  EXPECT_THAT(open_error(dir, bytes),
              AllOf(HasSubstr("tensor 'q'"),
                    HasSubstr("row length 16 is not a multiple of Q8_0's block size 32")));
  std::string huge = w.serialize();
  patch(huge, dims_pos + 8, 1ull << 62, 8);
  EXPECT_THAT(open_error(dir, huge), AllOf(HasSubstr("tensor 'q'"), HasSubstr("over 2^64")));
  std::string many_dims = w.serialize();
  patch(many_dims, dims_pos - 4, 5, 4);
  EXPECT_THAT(open_error(dir, many_dims),
              AllOf(HasSubstr("tensor 'q'"), HasSubstr("5 dimensions")));
}

TEST(gguf_file, refuses_duplicates) {
  temp_dir dir;
  std::string names = two_tensors();
  names[end_of_string(names, "a.y") - 1] = 'x';
  EXPECT_THAT(open_error(dir, names),
              AllOf(HasSubstr("tensor 'a.x'"), HasSubstr("listed twice")));
  gguf_writer w;
  w.add_u32("k.a", 1);
  w.add_u32("k.b", 2);
  std::string keys = w.serialize();
  keys[end_of_string(keys, "k.b") - 1] = 'a';
  EXPECT_THAT(open_error(dir, keys), AllOf(HasSubstr("key 'k.a'"), HasSubstr("listed twice")));
}

TEST(gguf_file, alignment_must_be_a_power_of_two) {
  temp_dir dir;
  auto ok = open_bytes(dir, two_tensors(64));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->alignment(), 64u);
  EXPECT_EQ(ok->find("a.y")->offset, 64u);
  for (uint64_t bad : {0, 24, 48}) {
    std::string bytes = two_tensors(64);
    patch(bytes, end_of_string(bytes, "general.alignment") + 4, bad, 4);
    EXPECT_THAT(open_error(dir, bytes),
                AllOf(HasSubstr("key 'general.alignment'"),
                      HasSubstr(std::to_string(bad) + " is not a power of two")));
  }
  std::string text = two_tensors(64);
  patch(text, end_of_string(text, "general.alignment"), 8, 4); // a string type: garbage length
  EXPECT_THAT(open_error(dir, text), HasSubstr("key 'general.alignment'"));
}

} // namespace
} // namespace kvactor::model
