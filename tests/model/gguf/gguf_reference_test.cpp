// gguf_writer's output read by Hugging Face's @huggingface/gguf parser
// (tools/gguf-reference/read.mjs) and by gguf_file: metadata values with
// their types, and tensor infos, must agree.

#include <cstdlib>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "model/gguf/gguf_file.hpp"
#include "model/gguf/gguf_writer.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using test_support::temp_dir;
using vt = gguf_value_type;

// `v` (as gguf_file reads it) against `j` (as read.mjs prints it).
void expect_same(const gguf_value& v, simdjson::dom::element j, const std::string& where) {
  SCOPED_TRACE(where);
  switch (v.type()) {
  case vt::u64: // read.mjs writes 64-bit integers as decimal strings
    EXPECT_EQ(std::string(j.get_string().value()), std::to_string(*v.to_unsigned()));
    break;
  case vt::i64:
    EXPECT_EQ(std::string(j.get_string().value()), std::to_string(*v.to_signed()));
    break;
  case vt::f32:
  case vt::f64: EXPECT_EQ(j.get_double().value(), *v.to_double()); break;
  case vt::boolean: EXPECT_EQ(j.get_bool().value(), *v.to_bool()); break;
  case vt::string: EXPECT_EQ(j.get_string().value(), *v.to_string()); break;
  case vt::array: {
    const auto items = v.elements();
    simdjson::dom::array arr = j.get_array().value();
    ASSERT_EQ(arr.size(), items.size());
    std::size_t i = 0;
    for (auto e : arr) {
      expect_same(items[i], e, where + "[" + std::to_string(i) + "]");
      ++i;
    }
    break;
  }
  default: EXPECT_EQ(j.get_int64().value(), *v.to_signed()); break;
  }
}

gguf_writer every_value_and_tensor_type() {
  gguf_writer w;
  w.set_alignment(64);
  w.add("v.u8", gguf_encoded::u8(200));
  w.add("v.i8", gguf_encoded::i8(-5));
  w.add("v.u16", gguf_encoded::u16(60000));
  w.add("v.i16", gguf_encoded::i16(-30000));
  w.add_u32("v.u32", 4000000000u);
  w.add_i32("v.i32", -2000000000);
  w.add_u64("v.u64", (1ull << 63) + 5);
  w.add("v.i64", gguf_encoded::i64(-(1ll << 62) - 3));
  w.add_f32("v.f32", 1.1f);
  w.add("v.f64", gguf_encoded::f64(-2.25e300));
  w.add_bool("v.bool", true);
  w.add_string("v.str", "h\xc3\xa9llo \xe2\x96\x81world");
  w.add_string("v.empty", "");
  w.add_string_array("a.str", {"<s>", "", "\xe2\x96\x81the"});
  const std::vector<float> floats = {0.1f, -1.0f, 3.25f};
  w.add_f32_array("a.f32", floats);
  const std::vector<int32_t> ints = {-1, 0, 2147483647};
  w.add_i32_array("a.i32", ints);
  w.add("a.u64", gguf_encoded::array(vt::u64, {gguf_encoded::u64(~0ull), gguf_encoded::u64(0)}));
  w.add("a.bool", gguf_encoded::array(vt::boolean, {gguf_encoded::boolean(false)}));
  w.add("a.u8", gguf_encoded::array(vt::u8, {gguf_encoded::u8(255)}));
  w.add("a.empty", gguf_encoded::array(vt::f64, {}));
  const auto shorts = gguf_encoded::array(vt::i16, {gguf_encoded::i16(-7), gguf_encoded::i16(9)});
  w.add("a.nested", gguf_encoded::array(vt::array, {shorts}));
  for (ggml_type t : all_ggml_types()) {
    const std::vector<uint64_t> dims = {ggml_block_size(t), 2, 3};
    const std::vector<std::byte> bytes(6ull * ggml_block_bytes(t), std::byte{0x11});
    w.add_tensor("t." + std::string(ggml_type_name(t)), dims, t, bytes);
  }
  return w;
}

TEST(gguf_reference, huggingface_gguf_reads_what_gguf_file_reads) {
  temp_dir dir;
  const auto file = dir / "every-type.gguf";
  const auto json_out = dir / "reference.json";
  ASSERT_TRUE(every_value_and_tensor_type().write(file));
  const std::string cmd = "node '" KVACTOR_GGUF_REFERENCE_DIR "/read.mjs' '" + file.string() +
                          "' > '" + json_out.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  auto f = gguf_file::open(file);
  ASSERT_TRUE(f) << f.error().message;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load(json_out.string()).value();
  EXPECT_EQ(doc["version"].get_int64().value(), 3);
  simdjson::dom::object meta = doc["metadata"].get_object().value();
  EXPECT_EQ(meta.size(), f->metadata().size());
  for (const auto& kv : f->metadata()) {
    simdjson::dom::element entry;
    ASSERT_EQ(meta[kv.key].get(entry), simdjson::SUCCESS) << "read.mjs lacks " << kv.key;
    EXPECT_EQ(entry["type"].get_int64().value(), static_cast<int64_t>(kv.value.type())) << kv.key;
    if (kv.value.type() == vt::array) {
      EXPECT_EQ(entry["subType"].get_int64().value(),
                static_cast<int64_t>(kv.value.element_type()))
        << kv.key;
    }
    expect_same(kv.value, entry["value"].value(), kv.key);
  }
  simdjson::dom::array tensors = doc["tensors"].get_array().value();
  ASSERT_EQ(tensors.size(), f->tensors().size());
  std::size_t i = 0;
  for (auto t : tensors) {
    const auto& info = f->tensors()[i++];
    EXPECT_EQ(t["name"].get_string().value(), info.name);
    EXPECT_EQ(t["type"].get_int64().value(), static_cast<int64_t>(info.type)) << info.name;
    EXPECT_EQ(std::string(t["offset"].get_string().value()), std::to_string(info.offset));
    simdjson::dom::array dims = t["dims"].get_array().value();
    ASSERT_EQ(dims.size(), info.dims.size()) << info.name;
    std::size_t d = 0;
    for (auto dim : dims)
      EXPECT_EQ(std::string(dim.get_string().value()), std::to_string(info.dims[d++])) << info.name;
  }
}

} // namespace
} // namespace kvactor::model
