#pragma once
// The ids a driver gives its requests on the line protocol: "r<index>", and
// back from an event's id to the index.

#include <cstdint>
#include <string>
#include <string_view>

namespace kvactor::tools {

// NOTE: appended, not "r" + to_string: g++ 12 -O3 warns -Wrestrict on the
// latter (a false positive, GCC bug 105329).
inline std::string id_of(int64_t index) {
  std::string id(1, 'r');
  id.append(std::to_string(index));
  return id;
}

// The index of an id that id_of wrote for one of num_requests requests
// ("r17" → 17); -1 for any other id.
inline int64_t index_of(std::string_view id, int64_t num_requests) {
  if (id.size() < 2 || id[0] != 'r' || (id[1] == '0' && id.size() > 2))
    return -1;
  int64_t v = 0;
  for (char c : id.substr(1)) {
    if (c < '0' || c > '9')
      return -1;
    v = v * 10 + (c - '0');
    if (v >= num_requests)
      return -1;
  }
  return v;
}

} // namespace kvactor::tools
