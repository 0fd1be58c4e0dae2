#pragma once
// socket_connection: what the connections of both protocols share — the
// socket (on its strand), a bounded outbox written one write at a time, and
// closing: after the last queued byte, or at once. A client that lets its
// outbox pass the limit is cut off rather than growing the server's memory.
// Every call runs on the socket's strand.

#include "net/outbox.hpp"
#include "net/server.hpp"

#include <functional>
#include <memory>
#include <string>

namespace kvactor::net {

class socket_connection : public connection,
                          public std::enable_shared_from_this<socket_connection> {
public:
  socket_connection(boost::asio::ip::tcp::socket socket, size_t max_output_bytes)
    : socket_(std::move(socket)), out_(max_output_bytes) {}

  boost::asio::any_io_executor executor() override { return socket_.get_executor(); }

protected:
  // Queues bytes for the client (nothing once closed).
  void send(std::string bytes);
  // Closes once everything queued is written.
  void close_after_flush();
  void close();
  bool closed() const { return closed_; }
  // Nothing queued or being written.
  bool flushed() const { return out_.empty(); }
  // The connection has closed: end its live work.
  virtual void on_close() {}

  template <class Derived>
  std::shared_ptr<Derived> shared_as() {
    return std::static_pointer_cast<Derived>(shared_from_this());
  }

  // A thread-safe callback (for an actor) that runs fn on this connection's
  // strand while the connection lives.
  // NOTE: it holds the connection's weak pointer and no executor: the actor
  // can outlive the server's io_context, and a strand executor's destructor
  // touches the io_context's strand service (ASan: heap-use-after-free in
  // ~strand_impl from ~bridge_state, found by
  // server_test.reassembles_split_lines_and_splits_joined_ones).
  template <class Derived, class Arg>
  std::function<void(Arg)> on_strand(void (Derived::*fn)(Arg)) {
    std::weak_ptr<socket_connection> weak = shared_from_this();
    return [weak, fn](Arg arg) {
      auto s = weak.lock();
      if (!s)
        return; // the connection is gone: nobody to hand it to
      boost::asio::post(s->executor(), [weak, fn, arg = std::move(arg)]() mutable {
        if (auto live = weak.lock())
          (static_cast<Derived*>(live.get())->*fn)(std::move(arg));
      });
    };
  }

  boost::asio::ip::tcp::socket socket_;

private:
  void write();
  void on_write(boost::system::error_code ec);

  outbox out_;
  bool closing_ = false;
  bool closed_ = false;
};

} // namespace kvactor::net
