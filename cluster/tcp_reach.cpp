// tcp_reach: a nonblocking connect per resolved address, polled until the
// deadline.

#include "cluster/tcp_reach.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace kvactor::cluster {

namespace {

using clock = std::chrono::steady_clock;

struct fd_closer {
  int fd = -1;
  ~fd_closer() {
    if (fd >= 0)
      ::close(fd);
  }
};

// Empty when a connection to `a` opened before `deadline`, else why not.
std::string reach_one(const addrinfo& a, clock::time_point deadline,
                      std::chrono::milliseconds timeout) {
  fd_closer s{::socket(a.ai_family, a.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a.ai_protocol)};
  if (s.fd < 0)
    return std::strerror(errno);
  if (::connect(s.fd, a.ai_addr, a.ai_addrlen) == 0)
    return {};
  if (errno != EINPROGRESS)
    return std::strerror(errno);
  pollfd p{s.fd, POLLOUT, 0};
  for (;;) {
    const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0)
      return "no answer within " + std::to_string(timeout.count()) + " ms";
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::strerror(errno);
    if (n == 0)
      continue; // the deadline check above ends it
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
      return std::strerror(errno);
    return err == 0 ? std::string{} : std::string{std::strerror(err)};
  }
}

} // namespace

std::string tcp_reach(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return "cannot resolve " + host + ": " + ::gai_strerror(rc);
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses{found, &::freeaddrinfo};
  std::string why = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    why = reach_one(*a, deadline, timeout);
    if (why.empty() || clock::now() >= deadline)
      break;
  }
  return why;
}

} // namespace kvactor::cluster
