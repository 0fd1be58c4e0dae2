#pragma once
// Linux's permission for AMX tile data, which the AMX kernels need
// (pair_kernels.cpp, quant_kernels.cpp).

namespace kvactor::model {

// Asks once for this process's permission; whether it holds it.
// NOTE: Linux hands out AMX's 8 KiB of tile state per process, on request
// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); a tile
// instruction without it faults. A kernel too old to know the request says
// no, and AMX is not used.
bool os_grants_tile_data();

} // namespace kvactor::model
