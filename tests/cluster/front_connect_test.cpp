// A front's connects: a worker whose address does not answer does not hold
// up the others (CAF's middleman connects with a blocking call, so the
// front first checks that the port answers).

#include "cluster/front_actor.hpp"
#include "cluster/protocol.hpp"
#include "cluster/worker_actor.hpp"

#include <arpa/inet.h>
#include <caf/io/middleman.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace kvactor::cluster {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

struct node_config : caf::actor_system_config {
  node_config() {
    kvactor::add_message_types(*this);
    add_cluster_message_types(*this);
    load<caf::io::middleman>();
  }
};

// A runtime with nothing to run: enough for a worker to say hello and report.
runtime_actor::behavior_type idle_runtime() {
  return {
    [](generate_atom, const generate_request&, const sink_actor&) {
      return admission{0, 0, errc::overloaded, "idle test runtime"};
    },
    [](cancel_atom, request_id) {},
    [](figures_atom) { return runtime_figures{}; },
    [](preempt_atom, request_id, bool) {},
    [](shutdown_atom) { return true; },
  };
}

// A loopback port whose full accept queue drops every further connection
// request: an address that does not answer.
struct silent_port {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  std::vector<int> fillers;
  uint16_t port = 0;

  silent_port() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd, 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    for (int i = 0; i < 4; ++i) {
      fillers.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
      ::connect(fillers.back(), reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
  }
  ~silent_port() {
    for (int f : fillers)
      ::close(f);
    ::close(fd);
  }
};

TEST(front_connect, a_worker_that_does_not_answer_holds_up_no_other) {
  node_config worker_cfg;
  caf::actor_system worker_sys{worker_cfg};
  auto runtime = worker_sys.spawn(idle_runtime);
  auto worker = spawn_worker(worker_sys, runtime, worker_hello{protocol_version, 8, "idle"});
  auto port = publish_worker(worker_sys, worker, "127.0.0.1", 0, false);
  ASSERT_TRUE(port) << worker_sys.render(port.error());

  silent_port silent;
  node_config front_cfg;
  caf::actor_system front_sys{front_cfg};
  front_options o;
  o.workers = {{"127.0.0.1", silent.port}, {"127.0.0.1", *port}};
  o.connect_timeout = 300ms;
  auto front = spawn_front(front_sys, std::move(o));

  // Without the check the silent port's connect would block the middleman
  // (and the live worker's connect behind it) for minutes.
  caf::scoped_actor self{front_sys};
  std::vector<worker_figures> seen;
  for (int i = 0; i < 200; ++i) {
    self->request(front, 5s, figures_atom::value)
      .receive([&](const runtime_figures& f) { seen = f.workers; }, [](const caf::error&) {});
    if (seen.size() == 2 && seen[1].state == "live" && seen[0].state == "down")
      break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].state, "live");
  EXPECT_EQ(seen[0].state, "down");
  EXPECT_THAT(seen[0].message, HasSubstr("no answer within 300 ms"));

  self->request(front, 5s, shutdown_atom::value).receive([](bool) {}, [](const caf::error&) {});
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(runtime, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace kvactor::cluster
