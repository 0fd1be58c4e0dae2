#include "net/server.hpp"

#include <chrono>

namespace kvactor::net {

namespace asio = boost::asio;
using asio::ip::tcp;

server::server(caf::actor_system& sys, runtime_actor runtime, server_options options)
  : sys_(sys), runtime_(std::move(runtime)), options_(options), acceptor_(io_) {
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
      acceptor_.bind(endpoint, ec) || acceptor_.listen(asio::socket_base::max_listen_connections, ec))
    return "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message();
  const uint16_t bound = acceptor_.local_endpoint().port();
  accept();
  for (int32_t i = 0; i < std::max(1, options_.num_io_threads); ++i)
    threads_.emplace_back([this] { io_.run(); });
  return bound;
}

void server::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec,
                                                         tcp::socket socket) {
    if (ec)
      return; // the acceptor was closed
    socket.set_option(tcp::no_delay(true), ec);
    auto s = std::make_shared<session>(std::move(socket), sys_, runtime_, options_.session);
    {
      std::lock_guard lock(mutex_);
      std::erase_if(sessions_, [](const auto& w) { return w.expired(); });
      sessions_.push_back(s);
    }
    asio::post(s->executor(), [s] { s->run(); });
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
  std::vector<std::shared_ptr<session>> live;
  {
    std::lock_guard lock(mutex_);
    for (auto& w : sessions_)
      if (auto s = w.lock())
        live.push_back(std::move(s));
  }
  for (auto& s : live)
    asio::post(s->executor(), [s] { s->drain(); });
  live.clear();
  // A session ends once its requests are done and its last line is written.
  // NOTE: a client that neither reads nor lets its requests end would keep
  // the server up: after a grace period the io threads are stopped anyway.
  for (int i = 0; i < 100 && num_sessions() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  io_.stop();
  for (auto& t : threads_)
    t.join();
  threads_.clear();
}

int32_t server::num_sessions() {
  std::lock_guard lock(mutex_);
  return static_cast<int32_t>(std::ranges::count_if(sessions_, [](const auto& w) { return !w.expired(); }));
}

} // namespace kvactor::net
