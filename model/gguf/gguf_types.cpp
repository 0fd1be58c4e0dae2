#include "model/gguf/gguf_types.hpp"

#include <array>
#include <utility>

namespace kvactor::model {
namespace {

struct type_traits {
  ggml_type type;
  std::string_view name;
  uint32_t block_size;
  uint32_t block_bytes;
};

// NOTE: the byte counts are the sizes of ggml's block structs: e.g. Q4_K holds
// two fp16 scales (4 bytes), 12 bytes of 6-bit sub-block scales and 128 bytes
// of 4-bit values for 256 elements.
constexpr std::array<type_traits, 32> traits = {{
  {ggml_type::f32, "F32", 1, 4},
  {ggml_type::f16, "F16", 1, 2},
  {ggml_type::q4_0, "Q4_0", 32, 18},
  {ggml_type::q4_1, "Q4_1", 32, 20},
  {ggml_type::q5_0, "Q5_0", 32, 22},
  {ggml_type::q5_1, "Q5_1", 32, 24},
  {ggml_type::q8_0, "Q8_0", 32, 34},
  {ggml_type::q8_1, "Q8_1", 32, 36},
  {ggml_type::q2_k, "Q2_K", 256, 84},
  {ggml_type::q3_k, "Q3_K", 256, 110},
  {ggml_type::q4_k, "Q4_K", 256, 144},
  {ggml_type::q5_k, "Q5_K", 256, 176},
  {ggml_type::q6_k, "Q6_K", 256, 210},
  {ggml_type::q8_k, "Q8_K", 256, 292},
  {ggml_type::iq2_xxs, "IQ2_XXS", 256, 66},
  {ggml_type::iq2_xs, "IQ2_XS", 256, 74},
  {ggml_type::iq3_xxs, "IQ3_XXS", 256, 98},
  {ggml_type::iq1_s, "IQ1_S", 256, 50},
  {ggml_type::iq4_nl, "IQ4_NL", 32, 18},
  {ggml_type::iq3_s, "IQ3_S", 256, 110},
  {ggml_type::iq2_s, "IQ2_S", 256, 82},
  {ggml_type::iq4_xs, "IQ4_XS", 256, 136},
  {ggml_type::i8, "I8", 1, 1},
  {ggml_type::i16, "I16", 1, 2},
  {ggml_type::i32, "I32", 1, 4},
  {ggml_type::i64, "I64", 1, 8},
  {ggml_type::f64, "F64", 1, 8},
  {ggml_type::iq1_m, "IQ1_M", 256, 56},
  {ggml_type::bf16, "BF16", 1, 2},
  {ggml_type::tq1_0, "TQ1_0", 256, 54},
  {ggml_type::tq2_0, "TQ2_0", 256, 66},
  {ggml_type::mxfp4, "MXFP4", 32, 17},
}};

constexpr std::array<ggml_type, traits.size()> types_in_order() {
  std::array<ggml_type, traits.size()> out{};
  for (std::size_t i = 0; i < traits.size(); ++i) out[i] = traits[i].type;
  return out;
}

constexpr auto all_types = types_in_order();

const type_traits* find_traits(uint32_t id) {
  for (const auto& t : traits)
    if (static_cast<uint32_t>(t.type) == id) return &t;
  return nullptr;
}

const type_traits& traits_of(ggml_type type) {
  const auto* t = find_traits(static_cast<uint32_t>(type));
  // NOTE: a ggml_type value comes from ggml_type_from_id or the enum's names,
  // so it is always in the table.
  return *t;
}

} // namespace

std::optional<ggml_type> ggml_type_from_id(uint32_t id) {
  const auto* t = find_traits(id);
  if (!t) return std::nullopt;
  return t->type;
}

std::string_view ggml_type_name(ggml_type t) { return traits_of(t).name; }

uint32_t ggml_block_size(ggml_type t) { return traits_of(t).block_size; }

uint32_t ggml_block_bytes(ggml_type t) { return traits_of(t).block_bytes; }

std::optional<uint64_t> ggml_tensor_bytes(ggml_type t, std::span<const uint64_t> dims) {
  const uint64_t row = dims.empty() ? 1 : dims[0];
  const auto& tr = traits_of(t);
  if (row % tr.block_size != 0) return std::nullopt;
  unsigned __int128 bytes = static_cast<unsigned __int128>(row / tr.block_size) * tr.block_bytes;
  for (std::size_t i = 1; i < dims.size(); ++i) {
    bytes *= dims[i];
    // NOTE: checked after every product: each factor is below 2^64, so the
    // 128-bit product of a value below 2^64 and one factor cannot overflow.
    if (bytes > UINT64_MAX) return std::nullopt;
  }
  return static_cast<uint64_t>(bytes);
}

std::span<const ggml_type> all_ggml_types() { return all_types; }

namespace {

constexpr std::pair<ggml_type, quant_format> computed_formats[] = {
  {ggml_type::q8_0, quant_format::q8_0},
  {ggml_type::q4_0, quant_format::q4_0},
  {ggml_type::q4_1, quant_format::q4_1},
  {ggml_type::q5_0, quant_format::q5_0},
  {ggml_type::q5_1, quant_format::q5_1},
  {ggml_type::q2_k, quant_format::q2_k},
  {ggml_type::q3_k, quant_format::q3_k},
  {ggml_type::q4_k, quant_format::q4_k},
  {ggml_type::q5_k, quant_format::q5_k},
  {ggml_type::q6_k, quant_format::q6_k},
  {ggml_type::iq4_nl, quant_format::iq4_nl},
  {ggml_type::iq4_xs, quant_format::iq4_xs}};

} // namespace

ggml_type ggml_type_of(quant_format f) {
  for (const auto& [type, format] : computed_formats)
    if (format == f) return type;
  return ggml_type::f32; // NOTE: unreachable: every quant_format is listed
}

std::optional<quant_format> quant_format_of(ggml_type t) {
  for (const auto& [type, format] : computed_formats)
    if (type == t) return format;
  return std::nullopt;
}

} // namespace kvactor::model
