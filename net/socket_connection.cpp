#include "net/socket_connection.hpp"

namespace kvactor::net {

namespace asio = boost::asio;

void socket_connection::send(std::string bytes) {
  if (closed_)
    return;
  if (!out_.push(std::move(bytes))) {
    close(); // a client that does not read loses its connection
    return;
  }
  if (out_.ready())
    write();
}

void socket_connection::write() {
  asio::async_write(socket_, asio::buffer(out_.front()),
                    [self = shared_from_this()](boost::system::error_code ec, size_t) {
                      self->on_write(ec);
                    });
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
  else if (closing_)
    close();
}

void socket_connection::close_after_flush() {
  closing_ = true;
  if (out_.empty())
    close();
}

void socket_connection::close() {
  if (closed_)
    return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  out_.clear();
  on_close();
}

} // namespace kvactor::net
