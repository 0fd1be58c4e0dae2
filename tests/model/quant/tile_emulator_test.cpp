// The tile emulator against the SDM's definitions, on cases worked by hand.
#include "tests/model/quant/tile_emulator.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "model/tile_config.hpp"

namespace kvactor::model::layers {
namespace {

// C (tmm0) [2, 2 dwords], A (tmm1) [2, 8 bytes], B (tmm2) [2 dwords, 2 dwords].
tile_config small_product() {
  tile_config c;
  c.rows[0] = 2, c.colsb[0] = 8;
  c.rows[1] = 2, c.colsb[1] = 8;
  c.rows[2] = 2, c.colsb[2] = 8;
  return c;
}

TEST(tile_emulator, dpbsud_adds_signed_a_times_unsigned_b_to_c) {
  const tile_config config = small_product();
  tile_emulator::load_config(&config);
  const int8_t a[2][8] = {{-1, 2, -3, 4, 0, 0, 0, 1}, {1, 1, 1, 1, -128, 0, 0, 0}};
  // B's row k holds, for each output column n, the 4 bytes that meet A's dword k.
  const uint8_t b[2][8] = {{255, 1, 128, 0, 1, 1, 1, 1}, {0, 0, 0, 2, 255, 0, 0, 0}};
  const int32_t c0[2][2] = {{10, 20}, {30, 40}};
  tile_emulator::load(0, c0, 8);
  tile_emulator::load(1, a, 8);
  tile_emulator::load(2, b, 8);
  tile_emulator::dpbsud(0, 1, 2);
  int32_t c[2][2];
  tile_emulator::store(0, c, 8);
  tile_emulator::release();
  // row 0: dword 0 of A (-1, 2, -3, 4) with B row 0, dword 1 of A (0, 0, 0, 1) with B row 1
  EXPECT_EQ(c[0][0], 10 + (-255 + 2 - 384 + 0) + 2);
  EXPECT_EQ(c[0][1], 20 + (-1 + 2 - 3 + 4) + 0);
  // row 1: (1, 1, 1, 1) and (-128, 0, 0, 0)
  EXPECT_EQ(c[1][0], 30 + (255 + 1 + 128) + 0);
  EXPECT_EQ(c[1][1], 40 + 4 + -128 * 255);
}

TEST(tile_emulator, loads_zero_past_the_columns_and_stores_only_the_tile) {
  tile_config config;
  config.rows[0] = 2, config.colsb[0] = 4;
  config.rows[1] = 2, config.colsb[1] = 8;
  tile_emulator::load_config(&config);
  const std::vector<uint8_t> rows = {1, 2, 3, 4, 9, 9, 9, 9, 5, 6, 7, 8, 9, 9, 9, 9};
  tile_emulator::load(0, rows.data(), 8);
  std::vector<uint8_t> out(16, 0xee);
  tile_emulator::store(0, out.data(), 8); // 4 bytes a row
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 2, 3, 4, 0xee, 0xee, 0xee, 0xee, 5, 6, 7, 8, 0xee, 0xee,
                                       0xee, 0xee}));
  tile_emulator::zero(1);
  tile_emulator::store(1, out.data(), 8);
  EXPECT_EQ(out, std::vector<uint8_t>(16, 0));
  tile_emulator::release();
}

TEST(tile_emulator, refuses_what_the_hardware_refuses) {
  const tile_config good = small_product();
  tile_config wrong_k = good; // A's 2 dwords against B's 1 row
  wrong_k.rows[2] = 1;
  EXPECT_DEATH(
    {
      tile_emulator::load_config(&wrong_k);
      tile_emulator::dpbsud(0, 1, 2);
    },
    "A's dwords are not B's rows");
  tile_config wrong_m = good;
  wrong_m.rows[1] = 1;
  EXPECT_DEATH(
    {
      tile_emulator::load_config(&wrong_m);
      tile_emulator::dpbsud(0, 1, 2);
    },
    "A's rows are not C's");
  EXPECT_DEATH(
    {
      tile_emulator::load_config(&good);
      tile_emulator::dpbsud(0, 1, 1);
    },
    "one tile twice");
  EXPECT_DEATH(
    {
      tile_emulator::load_config(&good);
      tile_emulator::zero(3);
    },
    "leaves out");
  EXPECT_DEATH(tile_emulator::zero(0), "without a tile configuration");
  tile_config reserved = good;
  reserved.reserved[3] = 1;
  EXPECT_DEATH(tile_emulator::load_config(&reserved), "reserved");
  tile_config too_wide = good;
  too_wide.colsb[0] = 68;
  EXPECT_DEATH(tile_emulator::load_config(&too_wide), "larger than");
}

} // namespace
} // namespace kvactor::model::layers
