#pragma once
// A model of AMX's tiles (palette 1: eight tiles of up to 16 rows of 64
// bytes) for running a tile kernel on any CPU: the instructions the integer
// kernel uses, each as the Intel SDM defines it, and each shape or
// configuration the hardware would refuse (#UD, #GP) an abort here. One set
// of tiles per thread, as the hardware keeps one per thread.

#include <cstdint>

namespace kvactor::model::layers::tile_emulator {

// ldtilecfg: the 64-byte configuration at `config` (palette 1 or 0, which
// releases); every tile zeroed.
void load_config(const void* config);
// tilerelease: back to no configuration.
void release();
// tilezero
void zero(int t);
// tileloadd: the tile's rows of colsb bytes from base + row * stride; the
// bytes past colsb zeroed.
void load(int t, const void* base, long stride);
// tilestored: the tile's rows of colsb bytes to base + row * stride.
void store(int t, void* base, long stride);
// tdpbsud: c[m] dword n += sum over the dwords k of a[m] of the four
// products of a's signed bytes and b[k]'s unsigned bytes of dword n.
void dpbsud(int c, int a, int b);

} // namespace kvactor::model::layers::tile_emulator
