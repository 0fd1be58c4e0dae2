#pragma once
// session: one client connection. Reads lines (at most max_line_bytes; a
// longer one is discarded up to its newline and answered with
// line_too_long), parses them, answers ping and bad lines itself and hands
// requests to its bridge actor; writes the bridge's lines in order, one write
// in flight at a time. A client that does not read is cut off once
// max_output_bytes are queued for it. Every handler runs on the socket's
// strand.

#include "net/bridge.hpp"
#include "net/line_protocol.hpp"
#include "net/socket_connection.hpp"

#include <boost/asio.hpp>

#include <array>
#include <deque>
#include <memory>
#include <string>

namespace kvactor::net {

struct session_options {
  size_t max_line_bytes = default_max_line_bytes;
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
  void on_close() override; // the bridge exits and the requests are cancelled

  caf::actor_system& sys_;
  runtime_actor runtime_;
  session_options options_;
  bridge_actor bridge_;
  line_parser parser_;
  std::array<char, 16384> chunk_;
  std::string line_;
  bool discarding_ = false; // inside a line that is too long
};

// The line protocol's connections, for a server.
connection_factory line_protocol(caf::actor_system& sys, runtime_actor runtime,
                                 session_options options = {});

} // namespace kvactor::net
