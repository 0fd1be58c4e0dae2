#pragma once
// client: a blocking line-protocol client over one TCP connection, for the
// CLI, the stress tool, the benchmarks and tests. Lines out are built from
// generate_request; lines in are parsed into server_event.

#include "kvactor/kvactor.hpp"

#include <boost/asio.hpp>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kvactor::net {

class json_writer;

// One server line, parsed (fields a given event lacks stay empty/zero).
struct server_event {
  std::string event; // accepted, token, done, stats, pong, error
  std::string id;    // empty when the line has "id": null
  int64_t index = 0, token = 0, prompt_tokens = 0;
  int64_t choice = -1; // -1: the line names none (a request of one choice, or all of them)
  std::string text, finish_reason, code, message;
  std::vector<int32_t> tokens;
  std::vector<int32_t> prompt_token_ids; // accepted, when the request asked (return_token_ids)
  int64_t completion_tokens = 0, cached_tokens = 0, preemptions = 0;
  double ttft_ms = 0, total_ms = 0;
  std::string line; // the raw line, without '\n'
};

// Parses a server line; nullopt if it is not a JSON object with "event".
std::optional<server_event> parse_event(std::string_view line);

// The fields a model's generation_config.json defaults for a request that
// leaves them out (net/request_defaults.hpp), to write even at
// generate_request's own values; the others are written only where they
// differ from those. By default a request fixes temperature, top_k and top_p
// (greedy stays greedy on any model); kvactor-client sends what its user gave.
struct given_sampling {
  bool temperature = true;
  bool top_k = true;
  bool top_p = true;
  bool min_p = false;
  bool repetition_penalty = false;
};

std::string generate_line(std::string_view id, const generate_request& req,
                          given_sampling given = {});
// The generation fields of `req` (max_tokens through min_tokens), as both the
// line protocol and the HTTP front read them; those after n only where they
// differ from their defaults, and those of given_sampling as it says.
void write_generation_fields(json_writer& w, const generate_request& req,
                             given_sampling given = {});
std::string cancel_line(std::string_view id);

class client {
public:
  // Connects; an error message names the address.
  static std::variant<std::unique_ptr<client>, std::string> connect(const std::string& host,
                                                                   uint16_t port);

  // Sends bytes as they are (a line must end in '\n').
  bool send(std::string_view bytes);
  // The next line without its '\n'; nullopt at EOF or on an error.
  std::optional<std::string> read_line();
  // The next event; nullopt at EOF, on an error or on a line that is not one.
  std::optional<server_event> read_event();
  void close();
  // Ends a read_line blocked in another thread (it returns nullopt) by
  // shutting the connection down both ways; the one call that is safe from
  // any thread.
  void interrupt();
  // SO_RCVBUF in bytes (a small one makes a slow reader).
  void set_receive_buffer(int32_t bytes);

private:
  client() : socket_(io_) {}
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::string buffer_;
};

// The client side of the HTTP front's /v1/completions, for the tools that
// drive it over a client's raw lines: a request that closes the connection
// after its answer, the status of a status line ("HTTP/1.1 200 OK" -> 200;
// 0 if it is none), and the next Server-Sent Event's data of a streamed
// answer (nullopt at [DONE] or at the end of the connection).
std::string completions_request(std::string_view host, std::string_view body);
int http_status(const std::string& status_line);
std::optional<std::string> next_sse_data(client& c);

} // namespace kvactor::net
