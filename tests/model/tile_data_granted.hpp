#pragma once
// Whether this process holds Linux's permission for AMX tile data
// (ARCH_GET_XCOMP_PERM), without asking for it.

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace kvactor::model {

inline bool os_granted_tile_data() {
  constexpr long arch_get_xcomp_perm = 0x1022;
  uint64_t features = 0;
  return syscall(SYS_arch_prctl, arch_get_xcomp_perm, &features) == 0 && (features >> 18 & 1) != 0;
}

} // namespace kvactor::model
