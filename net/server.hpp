#pragma once
// server: the Asio side of kvactor-serve — an io_context on its own threads,
// a listener that accepts connections (each socket on its own strand) and the
// sessions it started.
//
//   server s(sys, runtime, {});
//   auto port = s.listen("127.0.0.1", 7878);   // port 0: an ephemeral one
//   ... on SIGINT: s.stop_accepting(); shut the runtime down (live requests
//   end as aborted and their done lines go out); s.stop();

#include "net/session.hpp"

#include <boost/asio.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace kvactor::net {

struct server_options {
  session_options session;
  int32_t num_io_threads = 1;
};

class server {
public:
  server(caf::actor_system& sys, runtime_actor runtime, server_options options = {});
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds and starts accepting; the bound port, or an error message.
  std::variant<uint16_t, std::string> listen(const std::string& host, uint16_t port);
  void stop_accepting();
  // Flushes and closes every session, then stops the io threads.
  void stop();
  int32_t num_sessions();

private:
  void accept();

  caf::actor_system& sys_;
  runtime_actor runtime_;
  server_options options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<session>> sessions_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

} // namespace kvactor::net
