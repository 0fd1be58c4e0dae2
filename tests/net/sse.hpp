#pragma once
// The data of each Server-Sent Event in a stream, checking that the stream
// is nothing but `data: …\n\n` events.

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvactor::net {

inline std::vector<std::string> sse_events(const std::string& stream) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < stream.size()) {
    EXPECT_EQ(stream.compare(pos, 6, "data: "), 0) << stream.substr(pos);
    const size_t end = stream.find("\n\n", pos);
    if (end == std::string::npos) {
      ADD_FAILURE() << "an event without its end: " << stream.substr(pos);
      break;
    }
    out.push_back(stream.substr(pos + 6, end - pos - 6));
    pos = end + 2;
  }
  return out;
}

} // namespace kvactor::net
