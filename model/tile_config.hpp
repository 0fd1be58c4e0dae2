#pragma once
// The 64 bytes ldtilecfg reads for AMX's palette 1 (Intel SDM): the
// palette, the row to resume from, 14 reserved bytes, then each tile's
// bytes a row and rows. The AMX kernels (forward/pair_amx.cpp,
// quant/quant_amx.inl) and the tests' tile emulator use it.
// NOTE: in an unnamed namespace, so that each file including it, built
// with its own instruction-set flags, has its own copy (see
// linear_avx512.cpp).

#include <cstdint>

namespace kvactor::model::layers {
namespace {

struct alignas(64) tile_config {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(tile_config) == 64);

} // namespace
} // namespace kvactor::model::layers
