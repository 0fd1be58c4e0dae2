#include "net/server.hpp"

#include <chrono>

namespace kvactor::net {

namespace asio = boost::asio;
using asio::ip::tcp;

server::server(connection_factory make, int32_t num_io_threads)
  : make_(std::move(make)), num_io_threads_(num_io_threads), acceptor_(io_) {
}

server::~server() {
  stop();
}

std::variant<uint16_t, std::string> server::listen(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec)
    return "bad host '" + host + "': " + ec.message();
  tcp::endpoint endpoint(address, port);
  if (acceptor_.open(endpoint.protocol(), ec) ||
      acceptor_.set_option(tcp::acceptor::reuse_address(true), ec) ||
      acceptor_.bind(endpoint, ec) ||
      acceptor_.listen(asio::socket_base::max_listen_connections, ec))
    return "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message();
  const uint16_t bound = port_ = acceptor_.local_endpoint().port();
  accept();
  for (int32_t i = 0; i < std::max(1, num_io_threads_); ++i)
    threads_.emplace_back([this] { io_.run(); });
  return bound;
}

void server::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec,
                                                         tcp::socket socket) {
    if (ec)
      return; // the acceptor was closed
    socket.set_option(tcp::no_delay(true), ec);
    auto c = make_(std::move(socket));
    {
      std::lock_guard lock(mutex_);
      std::erase_if(connections_, [](const auto& w) { return w.expired(); });
      connections_.push_back(c);
    }
    asio::post(c->executor(), [c] { c->run(); });
    accept();
  });
}

void server::stop_accepting() {
  asio::post(io_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
}

void server::stop() {
  if (stopped_ || threads_.empty())
    return;
  stopped_ = true;
  stop_accepting();
  std::vector<std::shared_ptr<connection>> live;
  {
    std::lock_guard lock(mutex_);
    for (auto& w : connections_)
      if (auto c = w.lock())
        live.push_back(std::move(c));
  }
  for (auto& c : live)
    asio::post(c->executor(), [c] { c->drain(); });
  live.clear();
  // A connection ends once its requests are done and its last bytes written.
  // NOTE: a client that neither reads nor lets its requests end would keep
  // the server up: after a grace period the io threads are stopped anyway.
  for (int i = 0; i < 100 && num_connections() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  io_.stop();
  for (auto& t : threads_)
    t.join();
  threads_.clear();
}

int32_t server::num_connections() {
  std::lock_guard lock(mutex_);
  return static_cast<int32_t>(
    std::ranges::count_if(connections_, [](const auto& w) { return !w.expired(); }));
}

} // namespace kvactor::net
