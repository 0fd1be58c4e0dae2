#pragma once
// The front's --workers list, pure: "host:port,host:port" (an IPv6 host in
// brackets: "[::1]:7900"). A bad list is an error naming the entry at fault.

#include "base/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::cluster {

struct endpoint {
  std::string host;
  uint16_t port = 0;
  std::string str() const; // host:port, as given
  bool operator==(const endpoint&) const = default;
};

result<std::vector<endpoint>> parse_worker_list(std::string_view list);

} // namespace kvactor::cluster
