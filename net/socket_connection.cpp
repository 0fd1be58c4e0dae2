#include "net/socket_connection.hpp"

namespace kvactor::net {

namespace asio = boost::asio;
using namespace std::chrono_literals;

void socket_connection::send(std::string bytes, bool bounded) {
  if (closed_ || lingering_)
    return;
  if (!out_.push(std::move(bytes), bounded)) {
    close(); // a client that does not read loses its connection
    return;
  }
  if (out_.ready())
    write();
}

void socket_connection::write() {
  asio::async_write(
    socket_, asio::buffer(out_.front()),
    [self = shared_from_this()](boost::system::error_code ec, size_t) { self->on_write(ec); });
}

void socket_connection::on_write(boost::system::error_code ec) {
  out_.pop();
  if (closed_)
    return;
  if (ec) {
    close();
    return;
  }
  if (out_.ready())
    write();
  else if (closing_ && out_.empty())
    flushed_for_close();
}

void socket_connection::close_after_flush(std::optional<linger_limits> linger) {
  if (closing_ || closed_)
    return;
  closing_ = true;
  linger_ = linger;
  if (out_.empty())
    flushed_for_close();
}

void socket_connection::flushed_for_close() {
  if (!linger_)
    return close();
  // The answer is out: a FIN tells the client so; what it still sends is read
  // and dropped, so that the close does not reset the connection before the
  // client has read the answer.
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  lingering_ = true;
  linger_end_ = std::chrono::steady_clock::now() + linger_->total;
  discarded_.resize(16384);
  discard();
}

void socket_connection::discard() {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
    linger_end_ - std::chrono::steady_clock::now());
  if (left <= 0ms)
    return close();
  linger_timer_.expires_after(std::min(left, linger_->idle));
  linger_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec)
      self->close(); // the client stays silent, or the lingering time is up
  });
  socket_.async_read_some(asio::buffer(discarded_),
                          [self = shared_from_this()](boost::system::error_code ec, size_t) {
                            if (self->closed_)
                              return;
                            if (ec)
                              return self->close(); // the client has closed too
                            self->discard();
                          });
}

void socket_connection::close() {
  if (closed_)
    return;
  closed_ = true;
  boost::system::error_code ignored;
  linger_timer_.cancel();
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  out_.clear();
  discarded_ = {};
  on_close();
  if (released)
    released();
}

void refused_connection::run() {
  send(std::move(refusal_));
  close_after_flush(linger_limits{1s, 1s});
}

} // namespace kvactor::net
