#include "net/server.hpp"

#include "net/socket_connection.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace kvactor::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// Accept errors that mean the process (or the system) is out of descriptors
// or memory for a while: accepting again at once would spin.
bool out_of_resources(boost::system::error_code ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == asio::error::no_memory || ec.value() == ENFILE;
}

constexpr auto max_backoff = 1000ms;

} // namespace

bool connection_limit::try_open() {
  int32_t open = open_.load();
  while (open < max_)
    if (open_.compare_exchange_weak(open, open + 1))
      return true;
  return false;
}

int32_t default_max_connections() {
  // NOTE: what the process needs besides its clients: the model's files,
  // the CAF middleman's sockets, logs; and refused clients hold a descriptor
  // for their short linger.
  constexpr rlim_t reserve = 128;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 65536;
  return static_cast<int32_t>(std::clamp<rlim_t>(
    limit.rlim_cur > 2 * reserve ? limit.rlim_cur - reserve : limit.rlim_cur / 2, 1, 1 << 20));
}

server::server(connection_factory make, std::shared_ptr<connection_limit> limit)
  : make_(std::move(make)),
    limit_(limit ? std::move(limit)
                 : std::make_shared<connection_limit>(default_max_connections())),
    acceptor_(io_),
    backoff_(io_) {
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
  thread_ = std::thread([this] { io_.run(); });
  return bound;
}

void server::accept() {
  acceptor_.async_accept(
    asio::make_strand(io_),
    [this](boost::system::error_code ec, tcp::socket socket) { on_accept(ec, std::move(socket)); });
}

void server::on_accept(boost::system::error_code ec, tcp::socket socket) {
  if (!acceptor_.is_open())
    return; // stop_accepting()
  if (ec && out_of_resources(ec)) {
    // NOTE: the pending connection stays in the backlog; once descriptors
    // come back (a client leaves) it is accepted.
    backoff_delay_ = std::clamp(backoff_delay_ * 2, 10ms, max_backoff);
    backoff_.expires_after(backoff_delay_);
    backoff_.async_wait([this](boost::system::error_code wait_ec) {
      if (!wait_ec)
        accept();
    });
    return;
  }
  backoff_delay_ = 0ms;
  if (!ec) { // else the client went before it was accepted: nothing to do
    socket.set_option(tcp::no_delay(true), ec);
    if (limit_->try_open())
      start(std::move(socket));
    else
      refuse(std::move(socket));
  }
  accept();
}

void server::start(tcp::socket socket) {
  auto c = make_.make(std::move(socket));
  c->released = [this, key = c.get()] {
    // NOTE: posted: the connection calls this from inside itself, and
    // dropping the last owner there would destroy it mid-call.
    asio::post(io_, [this, key] {
      std::lock_guard lock(mutex_);
      if (connections_.erase(key) > 0)
        limit_->closed();
    });
  };
  {
    std::lock_guard lock(mutex_);
    connections_.emplace(c.get(), c);
  }
  asio::post(c->executor(), [c] { c->run(); });
}

void server::refuse(tcp::socket socket) {
  auto c = std::make_shared<refused_connection>(std::move(socket), make_.refusal);
  asio::post(c->executor(), [c] { c->run(); }); // its handlers keep it until it closes
}

void server::stop_accepting() {
  asio::post(io_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    backoff_.cancel();
  });
}

void server::stop() {
  if (stopped_ || !thread_.joinable())
    return;
  stopped_ = true;
  stop_accepting();
  std::vector<std::shared_ptr<connection>> live;
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, c] : connections_)
      live.push_back(c);
  }
  for (auto& c : live)
    asio::post(c->executor(), [c] { c->drain(); });
  live.clear();
  // A connection ends once its requests are done and its last bytes written.
  // NOTE: a client that neither reads nor lets its requests end would keep
  // the server up: after a grace period the io thread is stopped anyway.
  for (int i = 0; i < 100 && num_connections() > 0; ++i)
    std::this_thread::sleep_for(50ms);
  io_.stop();
  thread_.join();
  // Destroyed while the io_context lives: a socket's destructor needs it.
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < connections_.size(); ++i)
    limit_->closed();
  connections_.clear();
}

int32_t server::num_connections() {
  std::lock_guard lock(mutex_);
  return static_cast<int32_t>(connections_.size());
}

} // namespace kvactor::net
