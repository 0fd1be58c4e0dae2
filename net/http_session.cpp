#include "net/http_session.hpp"

#include "net/completion_actor.hpp"
#include "net/json_writer.hpp"
#include "net/openai_request.hpp"
#include "net/prometheus.hpp"
#include "net/tokenize_request.hpp"

#include <boost/beast/http/read.hpp>

#include <algorithm>
#include <cstdio>
#include <random>

namespace kvactor::net {

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

reply_part error_reply(const api_error& e) {
  return whole_reply(e.status, "application/json", format_api_error(e));
}

api_error server_error(int status, std::string message) {
  return {status, std::move(message), "server_error", std::nullopt, std::nullopt};
}

uint64_t random_u64() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) | rd();
}

std::string random_id() {
  char id[20];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(random_u64()));
  return id;
}

// The client's X-Request-Id when it is a sane header value (at most 128
// visible ASCII characters), else a new one.
template <class Request>
std::string request_id_of(const Request& req) {
  const auto given = req["x-request-id"];
  const bool sane = !given.empty() && given.size() <= 128 &&
                    std::ranges::all_of(given, [](char c) { return c > ' ' && c < 127; });
  return sane ? std::string(given.data(), given.size()) : random_id();
}

// cmpl-… or, for a chat, chatcmpl-…, as OpenAI names them.
std::string completion_id(bool chat) {
  return (chat ? "chatcmpl-" : "cmpl-") + random_id();
}

// The target without its query string.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// Errors that end reading with the connection gone, rather than a request
// to answer with an error.
bool connection_gone(boost::system::error_code ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec.category() != http::make_error_code(http::error::end_of_stream).category();
}

constexpr std::string_view models_prefix = "/v1/models/";

json_writer model_body(const http_front& front) {
  json_writer model;
  model.field("id", front.model_name)
    .field("object", "model")
    .field("created", front.created)
    .field("owned_by", "kvactor");
  return model;
}

json_writer models_body(const http_front& front) {
  return json_writer()
    .field("object", "list")
    .field("data", std::vector<json_writer>{model_body(front)});
}

api_error model_not_found(const std::string& name, const std::string& served,
                          std::optional<std::string> param) {
  return {404, "the model '" + name + "' does not exist; this server serves '" + served + "'",
          "invalid_request_error", std::move(param), "model_not_found"};
}

} // namespace

http_session::http_session(asio::ip::tcp::socket socket, std::shared_ptr<http_front> front)
  : socket_connection(std::move(socket), front->options.max_output_bytes),
    front_(std::move(front)), timer_(socket_.get_executor()) {
}

http_session::~http_session() {
  if (live_)
    caf::anon_send_exit(*live_, caf::exit_reason::user_shutdown);
}

void http_session::run() {
  arm_timer();
  read();
}

void http_session::read() {
  reading_ = true;
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(front_->options.max_header_bytes));
  parser_->body_limit(front_->options.max_body_bytes);
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_as<http_session>()](boost::system::error_code ec, size_t) {
                            self->on_header(ec);
                          });
}

void http_session::on_header(boost::system::error_code ec) {
  if (closed())
    return;
  if (ec || parser_->is_done()) {
    on_read(ec);
    return;
  }
  // NOTE: curl, among others, waits a second for "100 Continue" before it
  // sends a body announced so; it is sent unless another response is being
  // written (then the client sends the body after its wait).
  if (boost::beast::iequals(parser_->get()[http::field::expect], "100-continue") && !busy_ &&
      flushed())
    send("HTTP/1.1 100 Continue\r\n\r\n");
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_as<http_session>()](boost::system::error_code read_ec, size_t) {
                     self->on_read(read_ec);
                   });
}

void http_session::on_read(boost::system::error_code ec) {
  reading_ = false;
  if (closed())
    return;
  if (ec && connection_gone(ec)) {
    close(); // a live request is cancelled with its completion actor
    return;
  }
  if (ec) {
    // No more reading: where the next request would start is unknown.
    const int status = ec == http::error::body_limit     ? 413
                       : ec == http::error::header_limit ? 431
                                                         : 400;
    const std::string what =
      status == 413
        ? "the body is over " + std::to_string(front_->options.max_body_bytes) + " bytes"
      : status == 431
        ? "the headers are over " + std::to_string(front_->options.max_header_bytes) + " bytes"
        : "malformed HTTP request: " + ec.message();
    queued_.push_back({std::nullopt, error_reply({status, what})});
  } else {
    queued_.push_back({parser_->release(), std::nullopt});
    if (queued_.size() < front_->options.max_pipelined && !draining_)
      read();
  }
  timer_.cancel();
  next();
}

void http_session::next() {
  if (busy_ || queued_.empty() || closed())
    return;
  arrival a = std::move(queued_.front());
  queued_.pop_front();
  busy_ = true;
  request_id_header_ = "X-Request-Id: " + (a.req ? request_id_of(*a.req) : random_id()) + "\r\n";
  if (a.error) {
    // NOTE: reading stopped at the error, maybe in the middle of a body the
    // client still sends: the close lingers so that the answer is read.
    keep_alive_ = false;
    linger_ = true;
    reply(std::move(*a.error));
    return;
  }
  keep_alive_ = a.req->keep_alive() && !draining_;
  answer(*a.req);
}

void http_session::answer(const request& req) {
  const std::string_view path = path_of({req.target().data(), req.target().size()});
  const bool get = req.method() == http::verb::get;
  auto wrong_method = [&](std::string_view allowed) {
    reply(error_reply({405, "use " + std::string(allowed) + " " + std::string(path)}));
  };
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (req.method() != http::verb::post)
      return wrong_method("POST");
    complete(req, path == "/v1/chat/completions");
  } else if (path == "/tokenize" || path == "/detokenize") {
    if (req.method() != http::verb::post)
      return wrong_method("POST");
    if (!front_->tokenizer)
      return reply(error_reply({404, "this server has no tokenizer", "invalid_request_error"}));
    auto answer = path == "/tokenize" ? answer_tokenize(req.body(), *front_->tokenizer,
                                                        front_->chat, front_->max_model_len)
                                      : answer_detokenize(req.body(), *front_->tokenizer);
    if (auto* e = std::get_if<api_error>(&answer))
      return reply(error_reply(*e));
    reply(whole_reply(200, "application/json", std::get<std::string>(answer)));
  } else if (path == "/v1/models") {
    if (!get)
      return wrong_method("GET");
    reply(whole_reply(200, "application/json", models_body(*front_).str()));
  } else if (path.starts_with(models_prefix)) {
    if (!get)
      return wrong_method("GET");
    if (path.substr(models_prefix.size()) != front_->model_name)
      return reply(error_reply(model_not_found(std::string(path.substr(models_prefix.size())),
                                               front_->model_name, std::nullopt)));
    reply(whole_reply(200, "application/json", model_body(*front_).str()));
  } else if (path == "/health") {
    if (!get)
      return wrong_method("GET");
    if (front_->draining)
      return reply(error_reply(server_error(503, "the server is shutting down")));
    ask_figures([](const runtime_figures&) { return whole_reply(200, "text/plain", ""); });
  } else if (path == "/metrics") {
    if (!get)
      return wrong_method("GET");
    ask_figures([model = front_->model_name](const runtime_figures& f) {
      return whole_reply(200, std::string(prometheus_content_type), format_metrics(f, model));
    });
  } else {
    reply(error_reply({404,
                       "no route " +
                         std::string(req.method_string().data(), req.method_string().size()) + " " +
                         std::string(path),
                       "invalid_request_error"}));
  }
}

void http_session::complete(const request& req, bool chat) {
  if (front_->draining)
    return reply(error_reply(server_error(503, "the server is shutting down")));
  auto parsed = chat ? parse_chat_request(req.body(), random_u64(), front_->chat, front_->sampling)
                     : parse_completion_request(req.body(), random_u64(), front_->sampling);
  if (auto* e = std::get_if<api_error>(&parsed))
    return reply(error_reply(*e));
  auto& c = std::get<completion_request>(parsed);
  const auto num_choices = c.prompts.size() * static_cast<size_t>(c.prompts.front().n);
  if (num_choices > front_->options.max_choices)
    return reply(error_reply({400,
                              "the request asks for " + std::to_string(num_choices) +
                                " choices (prompts x n); this server takes at most " +
                                std::to_string(front_->options.max_choices) + " per request",
                              "invalid_request_error", c.prompts.size() > 1 ? "prompt" : "n"}));
  if (c.model && *c.model != front_->model_name)
    return reply(error_reply(model_not_found(*c.model, front_->model_name, "model")));
  completion_meta meta{completion_id(chat),
                       std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count(),
                       front_->model_name, c.stream, c.include_usage, chat,
                       c.return_token_ids, !c.prompts.empty() && c.prompts.front().logprobs >= 0,
                       c.tool_calls, c.named_tool, c.constrained_calls};
  live_ = spawn_completion(front_->sys, front_->runtime, std::move(c), std::move(meta),
                           on_strand(&http_session::reply));
}

void http_session::ask_figures(std::function<reply_part(const runtime_figures&)> on_figures) {
  auto deliver = on_strand(&http_session::reply);
  front_->sys.spawn([runtime = front_->runtime, on_figures, deliver](caf::event_based_actor* self) {
    self->request(runtime, std::chrono::seconds(5), figures_atom::value)
      .then([=](const runtime_figures& f) { deliver(on_figures(f)); },
            [=](const caf::error& e) {
              deliver(
                error_reply(server_error(503, "the runtime did not answer: " + to_string(e))));
            });
  });
}

void http_session::reply(reply_part part) {
  if (closed())
    return;
  const bool last = part.last;
  // A live stream's parts count against the slow-reader limit; a whole answer
  // is written whatever its size.
  send(wire_bytes(part, keep_alive_, request_id_header_), part.chunked);
  if (!last)
    return;
  live_.reset(); // the completion actor has quit
  busy_ = false;
  if (!keep_alive_ || draining_)
    return close_after_flush(linger_ && !draining_ ? std::optional(error_linger) : std::nullopt);
  if (!queued_.empty())
    return next();
  arm_timer();
  if (!reading_)
    read();
}

void http_session::arm_timer() {
  timer_.expires_after(front_->options.request_timeout);
  timer_.async_wait([weak = std::weak_ptr<http_session>(shared_as<http_session>())](
                      boost::system::error_code ec) {
    auto s = weak.lock();
    if (!ec && s && !s->busy_ && s->queued_.empty())
      s->close(); // no whole request in time
  });
}

void http_session::drain() {
  draining_ = true;
  if (!closed() && !busy_)
    close_after_flush(); // else once the response under way is written
}

void http_session::on_close() {
  timer_.cancel();
  if (live_)
    caf::anon_send_exit(*live_, caf::exit_reason::user_shutdown);
  live_.reset();
}

connection_factory http_protocol(std::shared_ptr<http_front> front) {
  const auto busy =
    error_reply(server_error(503, "the server has too many connections; try again later"));
  return {[front = std::move(front)](asio::ip::tcp::socket socket) {
            return std::make_shared<http_session>(std::move(socket), front);
          },
          wire_bytes(busy, false, "Retry-After: 1\r\n")};
}

} // namespace kvactor::net
