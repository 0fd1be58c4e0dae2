// Every integer kernel this CPU runs, alone, and the AMX kernel on the tile
// emulator on every CPU, against the chain they promise (quant_kernels.hpp),
// written here from the file blocks: bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "model/quant/quant_isa.hpp"
#include "model/quant/quant_kernels.hpp"
#include "tests/model/quant/quant_amx_emulated.hpp"
#include "tests/model/tile_data_granted.hpp"

namespace kvactor::model::layers {
namespace {

TEST(quant_kernels, the_cpu_gets_every_kernel_it_supports_best_first) {
  const std::span<const quant_isa> isas = quant_product_isas();
  std::vector<quant_isa> want;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  // After the lookup, the process holds the tile data permission iff it asked for it and got it.
  if (__builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-int8") && avx512 &&
      __builtin_cpu_supports("f16c") && os_granted_tile_data())
    want.push_back(quant_isa::amx_int8);
  if (avx512 && __builtin_cpu_supports("avx512vnni")) want.push_back(quant_isa::avx512_vnni);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni"))
    want.push_back(quant_isa::avx_vnni);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    want.push_back(quant_isa::avx2);
  want.push_back(quant_isa::generic);
  EXPECT_EQ(std::vector<quant_isa>(isas.begin(), isas.end()), want);
}

TEST(quant_kernels, amx_takes_the_products_of_a_full_tile_of_rows_or_more) {
  const std::span<const quant_isa> isas = quant_product_isas();
  const quant_isa vector_kernel = isas.front() == quant_isa::amx_int8 ? isas[1] : isas.front();
  for (int64_t m : {1, 2, 15}) EXPECT_EQ(quant_product_isa(m), vector_kernel) << m;
  for (int64_t m : {16, 17, 512}) EXPECT_EQ(quant_product_isa(m), isas.front()) << m;
}

// The rows of each tile in turn, m rows in tiles of at most `most`.
std::vector<int64_t> tiles(int64_t m, int64_t most) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < m; i += rows.back()) rows.push_back(next_tile_rows(m - i, most));
  return rows;
}

TEST(quant_kernels, tiles_take_their_most_rows_and_never_leave_one_row_alone_after_them) {
  using v = std::vector<int64_t>;
  EXPECT_EQ(tiles(15, 5), (v{5, 5, 5}));
  EXPECT_EQ(tiles(16, 5), (v{5, 5, 3, 3}));
  EXPECT_EQ(tiles(17, 5), (v{5, 5, 5, 2}));
  EXPECT_EQ(tiles(6, 5), (v{3, 3}));
  EXPECT_EQ(tiles(5, 4), (v{3, 2}));
  EXPECT_EQ(tiles(3, 4), (v{3}));
  EXPECT_EQ(tiles(1, 5), (v{1}));
  // Tiles of at most 2 rows have no smaller split.
  EXPECT_EQ(tiles(3, 2), (v{2, 1}));
}

TEST(quant_kernels, a_forced_kernel_serves_every_number_of_rows_until_released) {
  const quant_isa best = quant_product_isa(512);
  force_quant_product_isa(quant_isa::generic);
  for (int64_t m : {1, 16, 512}) EXPECT_EQ(quant_product_isa(m), quant_isa::generic) << m;
  force_quant_product_isa(std::nullopt);
  EXPECT_EQ(quant_product_isa(512), best);
}

TEST(quant_kernels, activations_quantise_per_block_with_their_sums) {
  std::vector<float> x(64);
  for (std::size_t i = 0; i < 64; ++i) x[i] = static_cast<float>(i) - 20.0f;
  quantized_rows q;
  quantize_rows(x.data(), 64, 1, 64, q);
  ASSERT_EQ(q.blocks, 2);
  EXPECT_EQ(q.d[0], 20.0f / 127.0f); // block 0: -20 .. 11
  EXPECT_EQ(q.q[0], -127);
  EXPECT_EQ(q.d[1], 43.0f / 127.0f); // block 1: 12 .. 43
  EXPECT_EQ(q.q[63], 127);
  for (std::size_t b = 0; b < 2; ++b) {
    int32_t sum = 0;
    for (std::size_t c = 0; c < 32; ++c) {
      const int8_t v = q.q[b * 32 + c];
      sum += v;
      EXPECT_LE(std::fabs(v * q.d[b] - x[b * 32 + c]), q.d[b] * 0.5001f);
    }
    EXPECT_EQ(q.sum[b], sum);
  }
}

TEST(quant_kernels, activations_for_the_k_formats_have_one_scale_per_256_and_sums_per_16) {
  std::vector<float> x(512);
  for (std::size_t i = 0; i < 512; ++i) x[i] = static_cast<float>(i % 300) - 100.0f;
  quantized_rows q;
  quantize_rows(x.data(), 512, 1, 512, q, 256);
  ASSERT_EQ(q.blocks, 2);
  ASSERT_EQ(q.sum.size(), 32u);
  EXPECT_EQ(q.d[0], 155.0f / 127.0f); // block 0: -100 .. 155
  EXPECT_EQ(q.d[1], 199.0f / 127.0f); // block 1: 156 .. 199, -100 .. 111
  for (std::size_t s = 0; s < 32; ++s) {
    int32_t sum = 0;
    for (std::size_t c = 16 * s; c < 16 * s + 16; ++c) {
      sum += q.q[c];
      EXPECT_LE(std::fabs(q.q[c] * q.d[s / 16] - x[c]), q.d[s / 16] * 0.5001f);
    }
    EXPECT_EQ(q.sum[s], sum);
  }
}

TEST(quant_kernels, a_row_with_a_nan_gives_nan_outputs) {
  std::vector<float> x(32, 1.0f);
  x[3] = std::nanf("");
  quantized_rows q;
  quantize_rows(x.data(), 32, 1, 32, q);
  EXPECT_TRUE(std::isnan(q.d[0]));
  EXPECT_EQ(q.sum[0], 0);
}

// Sub-block 0 of a Q3_K or IQ4_XS super-block to the most negative 6-bit
// scale, -32, which llama-quantize's files hold and kvactor's quantiser
// (its scales from the largest step over 31) never writes.
void set_scale_to_minus_32(quant_format f, std::byte* superblock) {
  auto* u = reinterpret_cast<uint8_t*>(superblock);
  if (f == quant_format::q3_k) { // its low 4 bits in scales[0], its top 2 in scales[8]
    u[96] &= 0xf0;
    u[104] &= 0xfc;
  }
  if (f == quant_format::iq4_xs) { // in scales_l[0] and scales_h
    u[4] &= 0xf0;
    u[2] &= 0xfc;
  }
}

// W's rows as file blocks, and the chain over them.
struct quant_case {
  quant_format format;
  int64_t n, k;
  std::vector<std::byte> blocks; // [n] rows of quant_row_bytes(format, k)
  quant_case(quant_format f, int64_t rows, int64_t cols, std::mt19937& rng)
    : format(f),
      n(rows),
      k(cols),
      blocks(static_cast<std::size_t>(rows) * quant_row_bytes(f, cols)) {
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<float> row(static_cast<std::size_t>(k));
    for (int64_t r = 0; r < n; ++r) {
      for (float& v : row) v = dist(rng);
      std::byte* out = blocks.data() + r * quant_row_bytes(f, k);
      quantize_row(f, row.data(), k, out);
      if (is_k_format(f))
        for (int64_t b = 0; b < k / 256; ++b)
          set_scale_to_minus_32(f, out + b * quant_block_bytes(f));
    }
  }
  weight_view view() const { return weight_view{blocks.data(), dtype::f32, 2, {n, k}, format}; }
  // s = 0; for b: s = s + (dw * dx) * isum   (two roundings each, unfused;
  // with a min: s = s + ((dw * dx) * isum + (m * dx) * xsum)), or the K
  // formats' chain over super-blocks
  float chain(const quantized_rows& x, int64_t i, int64_t j) const {
    const std::byte* row = blocks.data() + j * quant_row_bytes(format, k);
    if (is_k_format(format)) return k_chain(x, i, row);
    float s = 0;
    for (int64_t b = 0; b < k / 32; ++b) {
      const quant_block w = read_block(format, row, b);
      const auto at = static_cast<std::size_t>(i * x.blocks + b);
      int32_t isum = 0, xsum = 0;
      for (int64_t c = 0; c < 32; ++c) {
        const int8_t q = x.q[at * 32 + static_cast<std::size_t>(c)];
        isum += w.q[c] * q;
        xsum += q;
      }
      const float scale = w.d * x.d[at];
      const float term = scale * static_cast<float>(isum);
      if (has_block_min(format)) {
        const float min_term = (w.m * x.d[at]) * static_cast<float>(xsum);
        s = s + (term + min_term);
      } else {
        s = s + term;
      }
    }
    return s;
  }
  float k_chain(const quantized_rows& x, int64_t i, const std::byte* row) const {
    const int64_t sub = quant_sub_values(format), offset = quant_offset(format);
    float s = 0;
    for (int64_t b = 0; b < k / 256; ++b) {
      const quant_superblock w = read_superblock(format, row, b);
      const auto at = static_cast<std::size_t>(i * x.blocks + b);
      int32_t total = 0, mins = 0;
      for (int64_t j = 0; j < 256 / sub; ++j) {
        int32_t isum = 0, xsum = 0;
        for (int64_t c = j * sub; c < (j + 1) * sub; ++c) {
          const int8_t q = x.q[at * 256 + static_cast<std::size_t>(c)];
          const int32_t level =
            has_codebook(format) ? iq4_levels[w.n[c]] : w.n[c] - static_cast<int32_t>(offset);
          isum += level * q;
          xsum += q;
        }
        total += w.scale[j] * isum;
        if (has_sub_min(format)) mins += w.min[j] * xsum;
      }
      const float scaled = (w.d * x.d[at]) * static_cast<float>(total);
      if (has_sub_min(format))
        s = s + (scaled - (w.dmin * x.d[at]) * static_cast<float>(mins));
      else
        s = s + scaled;
    }
    return s;
  }
};

// Every format with the widths its blocks allow.
struct format_widths {
  quant_format format;
  std::vector<int64_t> widths;
};
const std::vector<format_widths>& formats() {
  static const std::vector<format_widths> all = {{quant_format::q8_0, {32, 96, 320}},
                                                 {quant_format::q4_0, {32, 96, 320}},
                                                 {quant_format::q4_1, {32, 96, 320}},
                                                 {quant_format::q5_0, {32, 96, 320}},
                                                 {quant_format::q5_1, {32, 96, 320}},
                                                 {quant_format::q2_k, {256, 768}},
                                                 {quant_format::q3_k, {256, 768}},
                                                 {quant_format::q4_k, {256, 768}},
                                                 {quant_format::q5_k, {256, 768}},
                                                 {quant_format::q6_k, {256, 768}},
                                                 {quant_format::iq4_nl, {32, 96, 320}},
                                                 {quant_format::iq4_xs, {256, 768}}};
  return all;
}

std::vector<float> random_rows(int64_t m, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(m * k));
  for (float& v : x) v = dist(rng);
  return x;
}

// A kernel under test: one of the CPU's (through quant_product), or, with
// no isa, the AMX kernel on the tile emulator.
struct kernel {
  std::optional<quant_isa> isa;
  std::string name() const { return isa ? isa_name(*isa) : "amx_int8_emulated"; }
  void product(const quantized_rows& x, int64_t m, const quantized_matrix& w, int64_t first_group,
               int64_t num_groups, float* y, int64_t ldy, bool accumulate) const {
    if (isa) quant_product(*isa, x, m, w, first_group, num_groups, y, ldy, accumulate);
    else
      quant_product_through(emulated_amx_products(), x, m, w, first_group, num_groups, y, ldy,
                            accumulate);
  }
};

class quant_kernels_test : public ::testing::TestWithParam<kernel> {
protected:
  void SetUp() override {
    const std::optional<quant_isa> isa = GetParam().isa;
    const std::span<const quant_isa> isas = quant_product_isas();
    if (isa && std::find(isas.begin(), isas.end(), *isa) == isas.end())
      GTEST_SKIP() << "this CPU does not run the " << isa_name(*isa) << " kernel";
  }
};

TEST_P(quant_kernels_test, every_output_is_the_chain_whatever_the_shape) {
  std::mt19937 rng(7);
  // m: every count of rows up to 12 (each tile and its tail), then decode
  // and prefill sizes (the AVX-512 kernel's 5-row tiles with every tail;
  // AMX: one, two and three row tiles, whole or not);
  // n: one output, partial and several groups (every group count of a tile
  // and its remainders).
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 12; ++m) ms.push_back(m);
  for (int64_t m : {16, 17, 31, 33, 48, 64}) ms.push_back(m);
  for (const auto& [f, widths] : formats())
    for (int64_t k : widths)
      for (int64_t n : {1, 15, 17, 48, 150}) {
        const quant_case c(f, n, k, rng);
        const quantized_matrix w = quantized_matrix::pack(std::vector{c.view()}, f);
        for (int64_t m : ms) {
          const std::vector<float> x = random_rows(m, k, rng), y0 = random_rows(m, n, rng);
          quantized_rows xq;
          quantize_rows(x.data(), k, m, k, xq, quant_block_values(f));
          for (bool accumulate : {false, true}) {
            std::vector<float> y = y0;
            GetParam().product(xq, m, w, 0, w.num_groups(), y.data(), n, accumulate);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                const auto at = static_cast<std::size_t>(i * n + j);
                const float s = c.chain(xq, i, j);
                const float want = accumulate ? s + y0[at] : s;
                ASSERT_EQ(y[at], want) << quant_name(f) << " k " << k << " n " << n << " m " << m
                                       << " row " << i << " out " << j;
              }
          }
        }
      }
}

TEST_P(quant_kernels_test, a_range_of_groups_writes_only_its_outputs) {
  std::mt19937 rng(9);
  const int64_t n = 80, m = 3;
  for (const auto& [f, widths] : formats()) {
    const int64_t k = widths.front();
    const quant_case c(f, n, k, rng);
    const quantized_matrix w = quantized_matrix::pack(std::vector{c.view()}, f);
    const std::vector<float> x = random_rows(m, k, rng);
    quantized_rows xq;
    quantize_rows(x.data(), k, m, k, xq, quant_block_values(f));
    std::vector<float> whole(static_cast<std::size_t>(m * n)), parts(whole.size(), -1.0f);
    GetParam().product(xq, m, w, 0, w.num_groups(), whole.data(), n, false);
    GetParam().product(xq, m, w, 1, 2, parts.data(), n, false); // rows 16 .. 47
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const auto at = static_cast<std::size_t>(i * n + j);
        if (j >= 16 && j < 48)
          EXPECT_EQ(parts[at], whole[at]);
        else
          EXPECT_EQ(parts[at], -1.0f);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(isas, quant_kernels_test,
                         ::testing::Values(kernel{quant_isa::generic}, kernel{quant_isa::avx2},
                                           kernel{quant_isa::avx_vnni},
                                           kernel{quant_isa::avx512_vnni},
                                           kernel{quant_isa::amx_int8}, kernel{std::nullopt}),
                         [](const ::testing::TestParamInfo<kernel>& p) { return p.param.name(); });

} // namespace
} // namespace kvactor::model::layers
