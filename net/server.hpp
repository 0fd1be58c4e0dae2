#pragma once
// server: the Asio side of kvactor-serve — an io_context on its own threads,
// a listener that accepts connections (each socket on its own strand) and the
// connections it started, of one protocol: the line protocol's sessions or
// the HTTP front's.
//
//   server s(line_protocol(sys, runtime));
//   auto port = s.listen("127.0.0.1", 7878);   // port 0: an ephemeral one
//   ... on SIGINT: s.stop_accepting(); shut the runtime down (live requests
//   end as aborted and their last lines go out); s.stop();

// NOTE: <utility> before Asio: Boost 1.74's awaitable.hpp uses std::exchange
// without including it, which C++20 with g++ 12 does not forgive.
#include <utility>

#include <boost/asio.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace kvactor::net {

// One accepted socket's protocol. Each call runs on the socket's strand.
class connection {
public:
  virtual ~connection() = default;
  virtual void run() = 0;
  // The server is stopping: close once the live requests have ended and
  // their last bytes are written.
  virtual void drain() = 0;
  virtual boost::asio::any_io_executor executor() = 0;
};

using connection_factory =
  std::function<std::shared_ptr<connection>(boost::asio::ip::tcp::socket)>;

class server {
public:
  explicit server(connection_factory make, int32_t num_io_threads = 1);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds and starts accepting; the bound port, or an error message.
  std::variant<uint16_t, std::string> listen(const std::string& host, uint16_t port);
  // The port listen() bound (0 before).
  uint16_t port() const { return port_; }
  void stop_accepting();
  // Drains every connection (a grace period of 5 s), then stops the io threads.
  void stop();
  int32_t num_connections();

private:
  void accept();

  connection_factory make_;
  int32_t num_io_threads_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<connection>> connections_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

} // namespace kvactor::net
