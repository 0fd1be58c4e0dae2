#pragma once
// Whether a TCP connection to host:port opens within a deadline.
//
// A front asks before it hands a worker's address to CAF's middleman: the
// middleman connects from its one actor with a blocking connect, so an
// address that does not answer (a machine down, a firewall dropping
// packets) would hold every other connect behind it for as long as the
// operating system keeps trying, minutes. This check runs on a thread of
// its own and gives up at the deadline.

#include <chrono>
#include <cstdint>
#include <string>

namespace kvactor::cluster {

// Empty when a connection opened (it is closed again at once), else why not:
// the name did not resolve, the connection was refused, or nothing answered
// within `timeout`. Blocks its caller for at most about `timeout` (name
// resolution aside).
std::string tcp_reach(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

} // namespace kvactor::cluster
