#pragma once
// socket_connection: what the connections of both protocols share — the
// socket (on its strand), a bounded outbox written one write at a time, and
// closing: after the last queued byte, or at once. A client that lets its
// outbox pass the limit is cut off rather than growing the server's memory.
// A close after an error can linger: the server stops sending, reads and
// discards what the client still sends (for a bounded time), then closes,
// so a client still writing its request reads the answer instead of a
// reset. Every call runs on the socket's strand.

#include "net/outbox.hpp"
#include "net/server.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvactor::net {

// How long a lingering close reads and discards: at most `total`, and
// ending once the client has sent nothing for `idle` (nginx's
// lingering_time and lingering_timeout).
struct linger_limits {
  std::chrono::milliseconds total;
  std::chrono::milliseconds idle;
};
inline constexpr linger_limits error_linger{std::chrono::seconds(30), std::chrono::seconds(5)};

class socket_connection : public connection,
                          public std::enable_shared_from_this<socket_connection> {
public:
  socket_connection(boost::asio::ip::tcp::socket socket, size_t max_output_bytes)
    : socket_(std::move(socket)), out_(max_output_bytes), linger_timer_(socket_.get_executor()) {}

  boost::asio::any_io_executor executor() override { return socket_.get_executor(); }

protected:
  // Queues bytes for the client (nothing once closed). Bounded bytes count
  // against the outbox's limit (a live stream's), the others (a whole
  // answer) are written whatever their size.
  void send(std::string bytes, bool bounded = true);
  // Closes once everything queued is written, lingering if told to.
  void close_after_flush(std::optional<linger_limits> linger = std::nullopt);
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
  void flushed_for_close();
  void discard();

  outbox out_;
  bool closing_ = false;
  bool closed_ = false;
  std::optional<linger_limits> linger_;
  bool lingering_ = false; // the answer is out, the client's bytes are dropped
  boost::asio::steady_timer linger_timer_;
  std::chrono::steady_clock::time_point linger_end_;
  std::vector<char> discarded_; // lingering: what the client still sends
};

// A connection refused over the connection limit: it writes the refusal,
// lingers briefly and closes.
class refused_connection : public socket_connection {
public:
  refused_connection(boost::asio::ip::tcp::socket socket, std::string refusal)
    : socket_connection(std::move(socket), refusal.size()), refusal_(std::move(refusal)) {}
  void run() override;
  void drain() override { close(); }

private:
  std::string refusal_;
};

} // namespace kvactor::net
