// The integer block products (quant_kernels.hpp), AMX-INT8: the tile
// kernel of quant_amx.inl on the tile instructions. The tests run the same
// kernel on a tile emulator on every CPU (tests/model/quant/tile_emulator.hpp).
// NOTE: built with -ffp-contract=off (the chain's multiplies and adds stay
// two roundings) and AVX-512, which the chain's 16-lane vectors become;
// every CPU with AMX has AVX-512.
#include <immintrin.h>

#include "model/quant/quant_isa.hpp"
#include "model/tile_config.hpp"

#define KVACTOR_TILE_CONFIG(config) _tile_loadconfig(config)
#define KVACTOR_TILE_RELEASE() _tile_release()
#define KVACTOR_TILE_ZERO(t) _tile_zero(t)
// NOTE: GCC's tileloadd is an asm with the address as a plain register
// input: the empty asm's memory clobber keeps every store before it (the
// unpacked tiles, the padded rows) ahead of the load.
#define KVACTOR_TILE_LOAD(t, base, stride)                                                         \
  do {                                                                                             \
    __asm__ volatile("" ::: "memory");                                                             \
    _tile_loadd(t, base, stride);                                                                  \
  } while (false)
#define KVACTOR_TILE_STORE(t, base, stride) _tile_stored(t, base, stride)
#define KVACTOR_TILE_DPBSUD(c, a, b) _tile_dpbsud(c, a, b)

namespace kvactor::model::layers::amx_int8 {
namespace {
float half_to_float(uint16_t bits) { return _cvtsh_ss(bits); }
} // namespace

#include "model/quant/quant_amx.inl"

} // namespace kvactor::model::layers::amx_int8
