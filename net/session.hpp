#pragma once
// session: one client connection. Reads lines (at most max_line_bytes; a
// longer one is discarded up to its newline and answered with
// line_too_long), parses them, answers ping and bad lines itself and hands
// requests to its bridge actor; writes the bridge's lines in order, one write
// in flight at a time. A client that does not read is cut off once
// max_output_bytes are queued for it. Unfinished lines are bounded too: a
// line must arrive whole within line_timeout of its first byte, and all the
// server's connections together hold at most their shared input budget in
// unfinished lines (past it, the line that would grow is dropped with
// overloaded). Every handler runs on the socket's strand.

#include "net/bridge.hpp"
#include "net/input_budget.hpp"
#include "net/line_protocol.hpp"
#include "net/socket_connection.hpp"

#include <boost/asio.hpp>

#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

namespace kvactor::net {

struct session_options {
  size_t max_line_bytes = default_max_line_bytes;
  std::chrono::milliseconds line_timeout{60000}; // for a line to arrive whole once begun
  // choices a connection may have live; more: overloaded (0: no limit;
  // kvactor-serve: a quarter of --max-waiting)
  int32_t max_live_choices = 0;
  // unfinished lines of all the server's connections (line_protocol(): 64 MiB)
  std::shared_ptr<input_budget> unfinished_lines;
  size_t max_output_bytes = size_t{16} << 20;
  int32_t socket_send_buffer = 0; // SO_SNDBUF in bytes; 0: the system's default
  model::sampling_defaults sampling; // the model's, for the fields a request leaves out
};

class session : public socket_connection {
public:
  session(boost::asio::ip::tcp::socket socket, caf::actor_system& sys, runtime_actor runtime,
          session_options options);
  ~session() override;

  void run() override;
  // Queues a line for the client (on the strand); "" from the bridge: it
  // has drained, close once the queued lines are written.
  void deliver(std::string line);
  // Closes once no request of the connection is live and every queued line
  // is written (on the strand).
  void drain() override;

private:
  void read();
  void on_read(boost::system::error_code ec, size_t n);
  void take(const char* data, size_t n);
  void handle_line(std::string_view line);
  // Holds room for an unfinished line of `size` bytes; false when the
  // input budget is spent.
  bool hold(size_t size);
  // Drops the line under way (answered `why` at its newline).
  void drop(protocol_error why);
  void release_line();
  void on_close() override; // the bridge exits and the requests are cancelled

  caf::actor_system& sys_;
  runtime_actor runtime_;
  session_options options_;
  bridge_actor bridge_;
  line_parser parser_;
  std::array<char, 16384> chunk_;
  std::string line_;
  size_t num_held_ = 0;                    // for line_, taken from the input budget
  std::optional<protocol_error> dropping_; // inside a line that is dropped, and why
  bool in_line_ = false;                   // a line has begun: its timer runs
  boost::asio::steady_timer line_timer_;
};

inline constexpr size_t default_unfinished_line_bytes = size_t{64} << 20;

// The line protocol's connections, for a server.
connection_factory line_protocol(caf::actor_system& sys, runtime_actor runtime,
                                 session_options options = {});

} // namespace kvactor::net
