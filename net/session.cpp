#include "net/session.hpp"

#include <cstring>

namespace kvactor::net {

namespace asio = boost::asio;

session::session(asio::ip::tcp::socket socket, caf::actor_system& sys, runtime_actor runtime,
                 session_options options)
  : socket_connection(std::move(socket), options.max_output_bytes), sys_(sys),
    runtime_(std::move(runtime)), options_(options), parser_(options.sampling) {
}

session::~session() {
  if (bridge_)
    caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown);
}

void session::run() {
  if (options_.socket_send_buffer > 0) {
    boost::system::error_code ignored;
    socket_.set_option(asio::socket_base::send_buffer_size(options_.socket_send_buffer), ignored);
  }
  bridge_ = spawn_bridge(sys_, runtime_, on_strand(&session::deliver));
  read();
}

void session::read() {
  socket_.async_read_some(asio::buffer(chunk_),
                          [self = shared_as<session>()](boost::system::error_code ec, size_t n) {
                            self->on_read(ec, n);
                          });
}

void session::on_read(boost::system::error_code ec, size_t n) {
  if (closed())
    return;
  if (ec) {
    close(); // EOF or error: the bridge exits and the requests are cancelled
    return;
  }
  take(chunk_.data(), n);
  if (!closed())
    read();
}

void session::take(const char* data, size_t n) {
  while (n > 0) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', n));
    const size_t len = nl ? size_t(nl - data) : n;
    if (!discarding_) {
      line_.append(data, len);
      if (line_.size() > options_.max_line_bytes) {
        discarding_ = true;
        line_.clear();
        line_.shrink_to_fit();
      }
    }
    if (!nl)
      return;
    if (discarding_) {
      discarding_ = false;
      deliver(format_error({"line_too_long", std::nullopt,
                            "lines are limited to " + std::to_string(options_.max_line_bytes) +
                              " bytes"}));
    } else {
      handle_line(line_);
    }
    line_.clear();
    data = nl + 1;
    n -= len + 1;
  }
}

void session::handle_line(std::string_view line) {
  if (line.empty() || line == "\r")
    return; // blank lines are ignored
  auto msg = parser_.parse(line);
  std::visit(
    [&](auto& m) {
      using T = std::decay_t<decltype(m)>;
      if constexpr (std::is_same_v<T, ping_op>)
        deliver(format_pong());
      else if constexpr (std::is_same_v<T, protocol_error>)
        deliver(format_error(m));
      else
        caf::anon_send(bridge_, std::move(m));
    },
    msg);
}

void session::deliver(std::string line) {
  if (line.empty()) // the bridge has drained
    close_after_flush();
  else
    send(std::move(line));
}

void session::drain() {
  if (!closed())
    caf::anon_send(bridge_, drain_atom::value);
}

void session::on_close() {
  if (bridge_)
    caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown);
}

connection_factory line_protocol(caf::actor_system& sys, runtime_actor runtime,
                                 session_options options) {
  return [&sys, runtime = std::move(runtime), options](asio::ip::tcp::socket socket) {
    return std::make_shared<session>(std::move(socket), sys, runtime, options);
  };
}

} // namespace kvactor::net
