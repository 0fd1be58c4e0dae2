#pragma once
// The AMX-INT8 integer kernel (model/quant/quant_amx.inl) on the tile
// emulator: the same source as quant_amx.cpp's, for every CPU.

namespace kvactor::model::layers {

struct quant_products;
const quant_products& emulated_amx_products();

} // namespace kvactor::model::layers
