#include "tests/model/quant/tile_emulator.hpp"

#include <cstring>

#include "base/assert.hpp"

namespace kvactor::model::layers::tile_emulator {
namespace {

constexpr int num_tiles = 8, max_rows = 16, max_colsb = 64;

struct tile_state {
  bool configured = false;
  int rows[num_tiles] = {};
  int colsb[num_tiles] = {};
  uint8_t data[num_tiles][max_rows][max_colsb] = {};
};

thread_local tile_state state;

// A configured tile's number.
int tile(int t) {
  KVACTOR_ASSERT(state.configured, "a tile instruction without a tile configuration (#UD)");
  KVACTOR_ASSERT(t >= 0 && t < num_tiles, "no such tile");
  KVACTOR_ASSERT(state.rows[t] > 0 && state.colsb[t] > 0,
                 "a tile the configuration leaves out (#UD)");
  return t;
}

} // namespace

void load_config(const void* config) {
  uint8_t bytes[64];
  std::memcpy(bytes, config, sizeof bytes);
  state = tile_state{};
  if (bytes[0] == 0) return; // palette 0: the init state
  KVACTOR_ASSERT(bytes[0] == 1, "a palette other than 0 and 1 (#GP)");
  for (int i = 2; i < 16; ++i)
    KVACTOR_ASSERT(bytes[i] == 0, "reserved configuration bytes set (#GP)");
  KVACTOR_ASSERT(bytes[1] == 0, "a configuration resuming from a start row");
  for (int t = 0; t < 16; ++t) {
    uint16_t colsb;
    std::memcpy(&colsb, bytes + 16 + 2 * t, sizeof colsb);
    const int rows = bytes[48 + t];
    if (t >= num_tiles) {
      KVACTOR_ASSERT(colsb == 0 && rows == 0, "a tile past palette 1's eight configured (#GP)");
      continue;
    }
    KVACTOR_ASSERT(colsb <= max_colsb && rows <= max_rows, "a tile larger than palette 1's (#GP)");
    KVACTOR_ASSERT((colsb == 0) == (rows == 0),
                   "a tile with rows but no columns, or columns but no rows (#GP)");
    state.rows[t] = rows;
    state.colsb[t] = colsb;
  }
  state.configured = true;
}

void release() { state = tile_state{}; }

void zero(int t) { std::memset(state.data[tile(t)], 0, sizeof state.data[t]); }

void load(int t, const void* base, long stride) {
  tile(t);
  std::memset(state.data[t], 0, sizeof state.data[t]);
  const auto* p = static_cast<const uint8_t*>(base);
  for (int r = 0; r < state.rows[t]; ++r)
    std::memcpy(state.data[t][r], p + r * stride, static_cast<std::size_t>(state.colsb[t]));
}

void store(int t, void* base, long stride) {
  tile(t);
  auto* p = static_cast<uint8_t*>(base);
  for (int r = 0; r < state.rows[t]; ++r)
    std::memcpy(p + r * stride, state.data[t][r], static_cast<std::size_t>(state.colsb[t]));
}

void dpbsud(int c, int a, int b) {
  tile(c);
  tile(a);
  tile(b);
  KVACTOR_ASSERT(c != a && c != b && a != b, "tdpbsud on one tile twice (#UD)");
  KVACTOR_ASSERT(state.rows[a] == state.rows[c], "tdpbsud: A's rows are not C's (#UD)");
  KVACTOR_ASSERT(state.colsb[b] == state.colsb[c], "tdpbsud: B's columns are not C's (#UD)");
  KVACTOR_ASSERT(state.colsb[a] % 4 == 0 && state.colsb[a] / 4 == state.rows[b],
                 "tdpbsud: A's dwords are not B's rows (#UD)");
  for (int m = 0; m < state.rows[c]; ++m)
    for (int n = 0; n < state.colsb[c] / 4; ++n) {
      // NOTE: unsigned: the sums wrap around as the hardware's do.
      uint32_t sum;
      std::memcpy(&sum, state.data[c][m] + 4 * n, sizeof sum);
      for (int k = 0; k < state.colsb[a] / 4; ++k)
        for (int i = 0; i < 4; ++i)
          sum += static_cast<uint32_t>(static_cast<int8_t>(state.data[a][m][4 * k + i]) *
                                       static_cast<int32_t>(state.data[b][k][4 * n + i]));
      std::memcpy(state.data[c][m] + 4 * n, &sum, sizeof sum);
    }
}

} // namespace kvactor::model::layers::tile_emulator
