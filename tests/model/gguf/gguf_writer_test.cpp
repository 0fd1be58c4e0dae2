// Round trips through gguf_writer and gguf_file: every metadata value type,
// every tensor type, alignment.

#include "model/gguf/gguf_writer.hpp"

#include <cmath>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/gguf/gguf_file.hpp"
#include "tests/model/gguf/gguf_test_bytes.hpp"

namespace kvactor::model {
namespace {

using test_support::temp_dir;
using vt = gguf_value_type;

TEST(gguf_types, ids_names_and_blocks_follow_the_specification) {
  EXPECT_EQ(ggml_type_from_id(0), ggml_type::f32);
  EXPECT_EQ(ggml_type_from_id(12), ggml_type::q4_k);
  EXPECT_EQ(ggml_type_from_id(30), ggml_type::bf16);
  EXPECT_EQ(ggml_type_from_id(39), ggml_type::mxfp4);
  for (uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u})
    EXPECT_EQ(ggml_type_from_id(removed), std::nullopt) << removed;
  EXPECT_EQ(all_ggml_types().size(), 32u);
  EXPECT_EQ(ggml_type_name(ggml_type::q4_k), "Q4_K");
  EXPECT_EQ(ggml_type_name(ggml_type::iq2_xxs), "IQ2_XXS");
  struct expect {
    ggml_type t;
    uint32_t block, bytes;
  };
  for (auto e : {expect{ggml_type::f32, 1, 4}, {ggml_type::bf16, 1, 2}, {ggml_type::q4_0, 32, 18},
                 {ggml_type::q8_0, 32, 34}, {ggml_type::q4_k, 256, 144},
                 {ggml_type::q6_k, 256, 210}, {ggml_type::q8_k, 256, 292},
                 {ggml_type::iq4_xs, 256, 136}, {ggml_type::tq1_0, 256, 54},
                 {ggml_type::mxfp4, 32, 17}, {ggml_type::i64, 1, 8}}) {
    EXPECT_EQ(ggml_block_size(e.t), e.block) << ggml_type_name(e.t);
    EXPECT_EQ(ggml_block_bytes(e.t), e.bytes) << ggml_type_name(e.t);
  }
  const uint64_t dims[] = {512, 3};
  EXPECT_EQ(ggml_tensor_bytes(ggml_type::q4_k, dims), 2u * 144 * 3);
  const uint64_t bad_row[] = {100, 3};
  EXPECT_EQ(ggml_tensor_bytes(ggml_type::q4_k, bad_row), std::nullopt);
  const uint64_t huge[] = {1ull << 40, 1ull << 40};
  EXPECT_EQ(ggml_tensor_bytes(ggml_type::f32, huge), std::nullopt);
}

// The block formats kvactor computes with map to the GGUF types of the
// same blocks and back; no other type maps to one.
TEST(gguf_types, the_computed_block_formats_are_their_ggml_types) {
  for (quant_format f : all_quant_formats()) {
    const ggml_type t = ggml_type_of(f);
    EXPECT_EQ(quant_format_of(t), f) << quant_name(f);
    EXPECT_EQ(ggml_block_size(t), static_cast<uint32_t>(quant_block_values(f))) << quant_name(f);
    EXPECT_EQ(ggml_block_bytes(t), quant_block_bytes(f)) << quant_name(f);
  }
  EXPECT_EQ(ggml_type_of(quant_format::q4_k), ggml_type::q4_k);
  int computed = 0;
  for (ggml_type t : all_ggml_types()) computed += quant_format_of(t).has_value();
  EXPECT_EQ(computed, static_cast<int>(all_quant_formats().size()));
  EXPECT_EQ(ggml_type_of(quant_format::q3_k), ggml_type::q3_k);
  EXPECT_EQ(ggml_type_of(quant_format::iq4_nl), ggml_type::iq4_nl);
  EXPECT_EQ(quant_format_of(ggml_type::iq4_xs), quant_format::iq4_xs);
}

TEST(gguf_writer, every_value_type_reads_back) {
  temp_dir dir;
  gguf_writer w;
  w.add("v.u8", gguf_encoded::u8(200));
  w.add("v.i8", gguf_encoded::i8(-5));
  w.add("v.u16", gguf_encoded::u16(60000));
  w.add("v.i16", gguf_encoded::i16(-30000));
  w.add_u32("v.u32", 4000000000u);
  w.add_i32("v.i32", -2000000000);
  w.add_u64("v.u64", (1ull << 63) + 5);
  w.add("v.i64", gguf_encoded::i64(-(1ll << 62)));
  w.add_f32("v.f32", 1.5f);
  w.add("v.f64", gguf_encoded::f64(-2.25e300));
  w.add_bool("v.true", true);
  w.add_bool("v.false", false);
  w.add_string("v.str", "h\xc3\xa9llo");
  w.add_string("v.empty", "");
  w.add_string_array("a.str", {"a", "", "\xe2\x96\x81the"});
  const std::vector<float> floats = {0.5f, -1.0f, 3.25f};
  w.add_f32_array("a.f32", floats);
  const std::vector<int32_t> ints = {-1, 0, 2147483647};
  w.add_i32_array("a.i32", ints);
  w.add("a.u8", gguf_encoded::array(vt::u8, {gguf_encoded::u8(1), gguf_encoded::u8(255)}));
  w.add("a.bool", gguf_encoded::array(vt::boolean, {gguf_encoded::boolean(true),
                                                    gguf_encoded::boolean(false)}));
  w.add("a.f64", gguf_encoded::array(vt::f64, {gguf_encoded::f64(0.125)}));
  w.add("a.empty", gguf_encoded::array(vt::u64, {}));
  const auto strings =
    gguf_encoded::array(vt::string, {gguf_encoded::string("x"), gguf_encoded::string("yz")});
  w.add("a.nested", gguf_encoded::array(
                      vt::array, {gguf_encoded::array(vt::i16, {gguf_encoded::i16(-7)}), strings}));
  ASSERT_TRUE(w.write(dir / "m.gguf"));

  auto f = gguf_file::open(dir / "m.gguf");
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 22u);
  EXPECT_EQ(f->metadata()[0].key, "v.u8"); // file order
  EXPECT_EQ(f->find_key("v.u8")->type(), vt::u8);
  EXPECT_EQ(*f->uint("v.u8"), 200u);
  EXPECT_EQ(f->find_key("v.i8")->to_signed(), -5);
  EXPECT_EQ(*f->uint("v.u16"), 60000u);
  EXPECT_EQ(f->find_key("v.i16")->to_signed(), -30000);
  EXPECT_EQ(*f->u32("v.u32"), 4000000000u);
  EXPECT_EQ(*f->i32("v.i32"), -2000000000);
  EXPECT_EQ(*f->u64("v.u64"), (1ull << 63) + 5);
  EXPECT_EQ(f->find_key("v.u64")->to_signed(), std::nullopt); // does not fit
  EXPECT_EQ(f->find_key("v.i64")->to_signed(), -(1ll << 62));
  EXPECT_EQ(*f->f32("v.f32"), 1.5f);
  EXPECT_EQ(*f->number("v.f64"), -2.25e300);
  EXPECT_EQ(*f->boolean("v.true"), true);
  EXPECT_EQ(*f->boolean("v.false"), false);
  EXPECT_EQ(*f->str("v.str"), "h\xc3\xa9llo");
  EXPECT_EQ(*f->str("v.empty"), "");
  EXPECT_EQ(*f->string_array("a.str"), (std::vector<std::string>{"a", "", "\xe2\x96\x81the"}));
  EXPECT_EQ(*f->f32_array("a.f32"), floats);
  EXPECT_EQ(*f->i32_array("a.i32"), ints);
  EXPECT_EQ(*f->array_size("a.u8"), 2u);
  EXPECT_EQ(f->find_key("a.u8")->elements()[1].to_unsigned(), 255u);
  EXPECT_EQ(f->find_key("a.bool")->elements()[0].to_bool(), true);
  EXPECT_EQ(f->find_key("a.f64")->elements()[0].to_double(), 0.125);
  EXPECT_EQ(f->find_key("a.empty")->type_name(), "array of uint64");
  EXPECT_EQ(*f->array_size("a.empty"), 0u);
  const auto nested = f->find_key("a.nested")->elements();
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].type_name(), "array of int16");
  EXPECT_EQ(nested[0].elements()[0].to_signed(), -7);
  EXPECT_EQ(nested[1].elements()[1].to_string(), "yz");
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return out;
}

TEST(gguf_writer, every_tensor_type_reads_back_aligned) {
  for (uint32_t alignment : {32u, 64u}) {
    temp_dir dir;
    gguf_writer w;
    if (alignment != 32) w.set_alignment(alignment);
    w.add_string("general.architecture", "llama");
    for (ggml_type t : all_ggml_types()) {
      const std::vector<uint64_t> dims = {2ull * ggml_block_size(t), 3};
      const auto bytes = pattern(6ull * ggml_block_bytes(t), static_cast<unsigned>(t));
      w.add_tensor("t." + std::string(ggml_type_name(t)), dims, t, bytes);
    }
    w.add_tensor("scalar", {}, ggml_type::f32, pattern(4, 7));
    ASSERT_TRUE(w.write(dir / "m.gguf"));
    auto f = gguf_file::open(dir / "m.gguf");
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(f->alignment(), alignment);
    EXPECT_EQ(f->data_offset() % alignment, 0u);
    ASSERT_EQ(f->tensors().size(), all_ggml_types().size() + 1);
    EXPECT_EQ(f->find("missing"), nullptr);
    for (ggml_type t : all_ggml_types()) {
      const auto* info = f->find("t." + std::string(ggml_type_name(t)));
      ASSERT_NE(info, nullptr) << ggml_type_name(t);
      EXPECT_EQ(info->type, t);
      EXPECT_EQ(info->dims, (std::vector<uint64_t>{2ull * ggml_block_size(t), 3}));
      EXPECT_EQ(info->num_elements(), 6ull * ggml_block_size(t));
      EXPECT_EQ(f->num_bytes(*info), 6ull * ggml_block_bytes(t));
      EXPECT_EQ(info->offset % alignment, 0u);
      const auto expected = pattern(f->num_bytes(*info), static_cast<unsigned>(t));
      EXPECT_EQ(std::memcmp(f->data(*info), expected.data(), expected.size()), 0)
        << ggml_type_name(t);
    }
    const auto* scalar = f->find("scalar");
    ASSERT_NE(scalar, nullptr);
    EXPECT_TRUE(scalar->dims.empty());
    EXPECT_EQ(f->num_bytes(*scalar), 4u);
  }
}

TEST(gguf_writer, metadata_only_file_reads_back) {
  temp_dir dir;
  gguf_writer w;
  w.add_string("general.name", "vocab only");
  const std::string bytes = w.serialize();
  EXPECT_EQ(bytes.substr(0, 4), "GGUF");
  auto f = test_support::open_bytes(dir, bytes);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->tensors().empty());
  EXPECT_EQ(*f->str("general.name"), "vocab only");
}

} // namespace
} // namespace kvactor::model
