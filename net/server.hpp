#pragma once
// server: the Asio side of kvactor-serve — an io_context on its own thread,
// a listener that accepts connections (each socket on its own strand) and
// owns the connections it started, of one protocol: the line protocol's
// sessions or the HTTP front's. A connection lives until it closes, whatever
// it has in flight. Past the connection limit a new client is told so and
// closed; when the process is out of descriptors, accepting backs off and
// tries again.
//
//   server s(line_protocol(sys, runtime), limit);
//   auto port = s.listen("127.0.0.1", 7878);   // port 0: an ephemeral one
//   ... on SIGINT: s.stop_accepting(); shut the runtime down (live requests
//   end as aborted and their last lines go out); s.stop();

// NOTE: <utility> before Asio: Boost 1.74's awaitable.hpp uses std::exchange
// without including it, which C++20 with g++ 12 does not forgive.
#include <utility>

#include <boost/asio.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>

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

  // Set by the server before run(); called once, on the strand, when the
  // connection has closed.
  std::function<void()> released;
};

struct connection_factory {
  std::function<std::shared_ptr<connection>(boost::asio::ip::tcp::socket)> make;
  // What a client refused over the connection limit reads before the close.
  std::string refusal;
};

// How many client connections a server (or the servers sharing it) keeps
// open at once. Thread-safe.
class connection_limit {
public:
  explicit connection_limit(int32_t max) : max_(max) {}
  // Counts one more open connection, unless the limit is reached.
  bool try_open();
  void closed() { open_.fetch_sub(1); }
  int32_t max() const { return max_; }
  int32_t num_open() const { return open_.load(); }

private:
  int32_t max_;
  std::atomic<int32_t> open_{0};
};

// The connection limit kvactor-serve takes by default: the descriptor limit
// (RLIMIT_NOFILE) less what the process needs besides its clients.
int32_t default_max_connections();

class server {
public:
  // No limit given: one of its own, default_max_connections().
  explicit server(connection_factory make, std::shared_ptr<connection_limit> limit = nullptr);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds and starts accepting; the bound port, or an error message.
  std::variant<uint16_t, std::string> listen(const std::string& host, uint16_t port);
  // The port listen() bound (0 before).
  uint16_t port() const { return port_; }
  void stop_accepting();
  // Drains every connection (a grace period of 5 s), then stops the io thread.
  void stop();
  int32_t num_connections();

private:
  void accept();
  void on_accept(boost::system::error_code ec, boost::asio::ip::tcp::socket socket);
  void start(boost::asio::ip::tcp::socket socket);
  void refuse(boost::asio::ip::tcp::socket socket);

  connection_factory make_;
  std::shared_ptr<connection_limit> limit_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_; // accepting again after running out of descriptors
  std::chrono::milliseconds backoff_delay_{0};
  std::mutex mutex_;
  std::unordered_map<const connection*, std::shared_ptr<connection>> connections_;
  std::thread thread_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

} // namespace kvactor::net
