#include "cluster/tcp_reach.hpp"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace kvactor::cluster {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// A socket listening on a free loopback port.
struct listener {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  uint16_t port = 0;

  explicit listener(int backlog) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd, backlog), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~listener() { ::close(fd); }
};

TEST(tcp_reach, a_listening_port_answers) {
  listener l(8);
  EXPECT_EQ(tcp_reach("127.0.0.1", l.port, 2000ms), "");
  EXPECT_EQ(tcp_reach("localhost", l.port, 2000ms), "");
}

TEST(tcp_reach, a_closed_port_is_refused) {
  uint16_t port = 0;
  {
    listener l(8);
    port = l.port;
  }
  EXPECT_THAT(tcp_reach("127.0.0.1", port, 2000ms), HasSubstr("refused"));
}

// A listener whose accept queue is full drops further connection requests:
// to a client it is an address that does not answer.
TEST(tcp_reach, gives_up_on_a_port_that_does_not_answer) {
  listener l(0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    fillers.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(l.port);
    ::connect(fillers.back(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  EXPECT_EQ(tcp_reach("127.0.0.1", l.port, 300ms), "no answer within 300 ms");
  for (int fd : fillers)
    ::close(fd);
}

TEST(tcp_reach, names_a_host_that_does_not_resolve) {
  EXPECT_THAT(tcp_reach("no-such-host.invalid", 7901, 2000ms),
              HasSubstr("cannot resolve no-such-host.invalid"));
}

} // namespace
} // namespace kvactor::cluster
