#pragma once
// raw_socket: a loopback client on a plain POSIX socket whose every wait is
// bounded, for tests that must not hang when the server misbehaves (it
// stops accepting, or never answers).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace kvactor::net::testing {

class raw_socket {
public:
  // Connects to 127.0.0.1:port; ok() tells whether it did.
  explicit raw_socket(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0)
      return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      close();
  }
  ~raw_socket() { close(); }
  raw_socket(const raw_socket&) = delete;
  raw_socket& operator=(const raw_socket&) = delete;

  bool ok() const { return fd_ >= 0; }

  // Writes all of `bytes` (blocking); false when the server reset or closed.
  bool write(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads until the server closes or `timeout` passes; what arrived.
  std::string read_to_end(std::chrono::milliseconds timeout) {
    return read_until({}, timeout);
  }

  // Reads until `what` has arrived (empty: until the close), the server
  // closes, or `timeout` passes; what arrived.
  std::string read_until(const std::string& what, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (what.empty() || got_.find(what) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        break;
      char chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      got_.append(chunk, static_cast<size_t>(n));
    }
    return got_;
  }

  // The server closed its side (seen by a read).
  bool closed_by_server() const { return closed_; }

  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
  std::string got_;
  bool closed_ = false;
};

} // namespace kvactor::net::testing
