#include "model/tile_data.hpp"

#include <sys/syscall.h>
#include <unistd.h>

namespace kvactor::model {

bool os_grants_tile_data() {
  static const bool granted = [] {
    constexpr long arch_req_xcomp_perm = 0x1023;
    constexpr long xfeature_xtiledata = 18;
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
  }();
  return granted;
}

} // namespace kvactor::model
