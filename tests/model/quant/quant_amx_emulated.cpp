#include "tests/model/quant/quant_amx_emulated.hpp"

#include "model/dtype.hpp"
#include "model/quant/quant_isa.hpp"
#include "model/tile_config.hpp"
#include "tests/model/quant/tile_emulator.hpp"

#define KVACTOR_TILE_CONFIG(config) tile_emulator::load_config(config)
#define KVACTOR_TILE_RELEASE() tile_emulator::release()
#define KVACTOR_TILE_ZERO(t) tile_emulator::zero(t)
#define KVACTOR_TILE_LOAD(t, base, stride) tile_emulator::load(t, base, stride)
#define KVACTOR_TILE_STORE(t, base, stride) tile_emulator::store(t, base, stride)
#define KVACTOR_TILE_DPBSUD(c, a, b) tile_emulator::dpbsud(c, a, b)

namespace kvactor::model::layers {
namespace amx_int8_emulated {
namespace {
float half_to_float(uint16_t bits) { return f16_to_f32(bits); }
} // namespace

#include "model/quant/quant_amx.inl"

} // namespace amx_int8_emulated

const quant_products& emulated_amx_products() { return amx_int8_emulated::products; }

} // namespace kvactor::model::layers
