#include "net/session.hpp"

#include <cstring>
#include <utility>

namespace kvactor::net {

namespace asio = boost::asio;

session::session(asio::ip::tcp::socket socket, caf::actor_system& sys, runtime_actor runtime,
                 session_options options)
  : socket_connection(std::move(socket), options.max_output_bytes), sys_(sys),
    runtime_(std::move(runtime)), options_(std::move(options)), parser_(options_.sampling),
    line_timer_(socket_.get_executor()) {
  if (!options_.unfinished_lines)
    options_.unfinished_lines = std::make_shared<input_budget>(default_unfinished_line_bytes);
}

session::~session() {
  if (bridge_)
    caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown);
  options_.unfinished_lines->give(num_held_);
}

void session::run() {
  if (options_.socket_send_buffer > 0) {
    boost::system::error_code ignored;
    socket_.set_option(asio::socket_base::send_buffer_size(options_.socket_send_buffer), ignored);
  }
  bridge_ =
    spawn_bridge(sys_, runtime_, on_strand(&session::deliver), options_.max_live_choices);
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
  if (closed())
    return;
  if (!in_line_ && (!line_.empty() || dropping_)) {
    in_line_ = true; // a line has begun: it must end in time
    line_timer_.expires_after(options_.line_timeout);
    line_timer_.async_wait(
      [weak = std::weak_ptr<session>(shared_as<session>())](boost::system::error_code timer_ec) {
        auto s = weak.lock();
        if (timer_ec || !s || s->closed() || !s->in_line_)
          return;
        s->deliver(format_error({"line_timeout", std::nullopt,
                                 "a line must arrive whole within " +
                                   std::to_string(s->options_.line_timeout.count()) +
                                   " ms of its first byte"}));
        s->close_after_flush(error_linger); // a client still sending reads it
      });
  }
  read();
}

void session::take(const char* data, size_t n) {
  while (n > 0) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', n));
    const size_t len = nl ? size_t(nl - data) : n;
    if (!dropping_) {
      if (line_.size() + len > options_.max_line_bytes)
        drop({"line_too_long", std::nullopt,
              "lines are limited to " + std::to_string(options_.max_line_bytes) + " bytes"});
      else if (!hold(line_.size() + len))
        drop({"overloaded", std::nullopt,
              "the server holds too much unfinished input; the line was dropped"});
      else
        line_.append(data, len);
    }
    if (!nl)
      return;
    if (dropping_)
      deliver(format_error(*std::exchange(dropping_, std::nullopt)));
    else
      handle_line(line_);
    release_line();
    in_line_ = false;
    line_timer_.cancel();
    data = nl + 1;
    n -= len + 1;
  }
}

bool session::hold(size_t size) {
  if (size <= num_held_)
    return true;
  // NOTE: grown by doubling, as a string grows, so that a long line takes
  // from the shared budget a few times rather than at every read.
  const size_t want = std::min(std::max(size, 2 * num_held_), options_.max_line_bytes);
  if (!options_.unfinished_lines->take(want - num_held_))
    return false;
  num_held_ = want;
  line_.reserve(want);
  return true;
}

void session::drop(protocol_error why) {
  dropping_ = std::move(why);
  release_line();
}

void session::release_line() {
  line_ = {};
  options_.unfinished_lines->give(std::exchange(num_held_, 0));
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
  line_timer_.cancel();
  release_line();
  if (bridge_)
    caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown);
}

connection_factory line_protocol(caf::actor_system& sys, runtime_actor runtime,
                                 session_options options) {
  if (!options.unfinished_lines) // one budget for all the server's connections
    options.unfinished_lines = std::make_shared<input_budget>(default_unfinished_line_bytes);
  return {[&sys, runtime = std::move(runtime), options](asio::ip::tcp::socket socket) {
            return std::make_shared<session>(std::move(socket), sys, runtime, options);
          },
          format_error(
            {"overloaded", std::nullopt, "the server has too many connections; try again later"})};
}

} // namespace kvactor::net
