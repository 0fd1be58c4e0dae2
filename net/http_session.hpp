#pragma once
// http_session: one HTTP/1.1 connection of the OpenAI-compatible front.
// Requests are parsed by Beast (header and body limits) and answered one at
// a time, in order; the connection goes on reading while one is answered, so
// pipelined requests queue (up to a limit) and a client that goes away is
// seen at once: its live request is cancelled. Keep-alive, a timeout for a
// request to arrive whole, and a bounded outbox as the line protocol has.
// Every handler runs on the socket's strand.
//
//   POST /v1/completions   POST /v1/chat/completions
//   GET /v1/models   GET /health   GET /metrics

#include "net/http_reply.hpp"
#include "net/socket_connection.hpp"

#include "kvactor/kvactor.hpp"
#include "model/chat_template.hpp"
#include "model/sampling_defaults.hpp"
#include "model/tokenizer/tokenizer.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <string>

namespace kvactor::net {

struct http_options {
  size_t max_body_bytes = size_t{1} << 20;   // larger bodies: 413
  size_t max_header_bytes = size_t{16} << 10; // larger headers: 431
  std::chrono::milliseconds request_timeout{60000}; // for a request to arrive whole once idle
  size_t max_output_bytes = size_t{16} << 20;
  size_t max_pipelined = 16; // requests read ahead of the one being answered
  // prompts x n of one request; more: 400. NOTE: a connection's requests
  // are answered one at a time, so this bounds what one connection holds of
  // the runtime's waiting queue (kvactor-serve: at most a quarter of it).
  size_t max_choices = 256;
};

// What every HTTP connection of a server shares.
struct http_front {
  http_front(caf::actor_system& sys_, runtime_actor runtime_, std::string model_name_,
             http_options options_ = {})
    : sys(sys_), runtime(std::move(runtime_)), model_name(std::move(model_name_)),
      options(options_) {}

  caf::actor_system& sys;
  runtime_actor runtime;
  std::string model_name; // what /v1/models lists and requests must name
  http_options options;
  // the model's (plain: none)
  model::chat_template chat = model::chat_template::plain();
  // the model's generation_config.json defaults (none: OpenAI's), for the
  // sampling fields a request leaves out
  model::sampling_defaults sampling;
  // the model's tokenizer, for /tokenize and /detokenize (none: 404), and
  // its context length, which /tokenize reports
  std::shared_ptr<const model::tokenizer> tokenizer;
  std::optional<int64_t> max_model_len;
  std::atomic<bool> draining{false}; // the server is stopping: 503 for new work
  int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
};

class http_session : public socket_connection {
public:
  http_session(boost::asio::ip::tcp::socket socket, std::shared_ptr<http_front> front);
  ~http_session() override;

  void run() override;
  void drain() override;

private:
  using request = boost::beast::http::request<boost::beast::http::string_body>;
  // A request read whole, or the error that ended reading (answered in turn).
  struct arrival {
    std::optional<request> req;
    std::optional<reply_part> error;
  };

  void read();
  void on_header(boost::system::error_code ec);
  void on_read(boost::system::error_code ec);
  void next();
  void answer(const request& req);
  void complete(const request& req, bool chat);
  void ask_figures(std::function<reply_part(const runtime_figures&)> on_figures);
  // A part of the current response (from a handler or the completion actor).
  void reply(reply_part part);
  void arm_timer();
  void on_close() override; // a live request is cancelled with its completion actor

  std::shared_ptr<http_front> front_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::deque<arrival> queued_;
  boost::asio::steady_timer timer_;
  std::optional<sink_actor> live_; // the completion being answered
  bool reading_ = false;
  bool busy_ = false;       // a response is under way
  bool keep_alive_ = true;  // of the response under way
  bool draining_ = false;
  bool linger_ = false;           // reading ended at an error: the close lingers
  std::string request_id_header_; // of the response under way
};

// The HTTP front's connections, for a server.
connection_factory http_protocol(std::shared_ptr<http_front> front);

} // namespace kvactor::net
