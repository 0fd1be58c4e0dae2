#include "net/client.hpp"

#include <cstdlib>

#include "net/json_writer.hpp"

#include <simdjson.h>

#include <sys/socket.h>

namespace kvactor::net {

namespace asio = boost::asio;
namespace od = simdjson::ondemand;

namespace {

void read_object(od::object obj, server_event& e) {
  for (auto field : obj) {
    std::string_view key, s;
    if (field.unescaped_key().get(key))
      return;
    auto v = field.value();
    int64_t n = 0;
    double d = 0;
    if (key == "event" && !v.get_string().get(s)) e.event = s;
    else if (key == "id" && !v.get_string().get(s)) e.id = s;
    else if (key == "text" && !v.get_string().get(s)) e.text = s;
    else if (key == "finish_reason" && !v.get_string().get(s)) e.finish_reason = s;
    else if (key == "code" && !v.get_string().get(s)) e.code = s;
    else if (key == "message" && !v.get_string().get(s)) e.message = s;
    else if (key == "index" && !v.get_int64().get(n)) e.index = n;
    else if (key == "choice" && !v.get_int64().get(n)) e.choice = n;
    else if (key == "token" && !v.get_int64().get(n)) e.token = n;
    else if (key == "prompt_tokens" && !v.get_int64().get(n)) e.prompt_tokens = n;
    else if (key == "completion_tokens" && !v.get_int64().get(n)) e.completion_tokens = n;
    else if (key == "cached_tokens" && !v.get_int64().get(n)) e.cached_tokens = n;
    else if (key == "preemptions" && !v.get_int64().get(n)) e.preemptions = n;
    else if (key == "ttft_ms" && !v.get_double().get(d)) e.ttft_ms = d;
    else if (key == "total_ms" && !v.get_double().get(d)) e.total_ms = d;
    else if (key == "tokens" || key == "prompt_token_ids") {
      auto& out = key == "tokens" ? e.tokens : e.prompt_token_ids;
      od::array a;
      if (!v.get_array().get(a))
        for (auto item : a)
          if (!item.get_int64().get(n))
            out.push_back(static_cast<int32_t>(n));
    } else if (key == "usage" || key == "timing") {
      od::object inner;
      if (!v.get_object().get(inner))
        read_object(inner, e);
    }
  }
}

} // namespace

std::optional<server_event> parse_event(std::string_view line) {
  thread_local od::parser parser;
  simdjson::padded_string padded(line);
  od::document doc;
  od::object obj;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(obj))
    return std::nullopt;
  server_event e;
  read_object(obj, e);
  if (e.event.empty())
    return std::nullopt;
  e.line = line;
  return e;
}

std::string generate_line(std::string_view id, const generate_request& req,
                          given_sampling given) {
  json_writer w;
  w.field("op", "generate").field("id", id);
  if (!req.prompt_tokens.empty())
    w.field("prompt_tokens", req.prompt_tokens);
  else
    w.field("prompt", req.prompt);
  write_generation_fields(w, req, given);
  return w.line();
}

void write_generation_fields(json_writer& w, const generate_request& req,
                             given_sampling given) {
  const generate_request defaults;
  w.field("max_tokens", req.max_tokens);
  if (given.temperature || req.temperature != defaults.temperature)
    w.field("temperature", double(req.temperature));
  if (given.top_k || req.top_k != defaults.top_k)
    w.field("top_k", req.top_k);
  if (given.top_p || req.top_p != defaults.top_p)
    w.field("top_p", double(req.top_p));
  w.field("seed", req.seed)
    .field("priority", req.priority)
    .field("ignore_eos", req.ignore_eos);
  if (!req.stop.empty())
    w.field("stop", req.stop);
  if (req.logprobs >= 0)
    w.field("logprobs", req.logprobs);
  if (req.n > 1)
    w.field("n", req.n);
  // The sampling fields vLLM added, only where they differ from their
  // defaults (a server that predates them ignores them then).
  if (given.min_p || req.min_p != defaults.min_p)
    w.field("min_p", double(req.min_p));
  if (req.presence_penalty != 0)
    w.field("presence_penalty", double(req.presence_penalty));
  if (req.frequency_penalty != 0)
    w.field("frequency_penalty", double(req.frequency_penalty));
  if (given.repetition_penalty || req.repetition_penalty != defaults.repetition_penalty)
    w.field("repetition_penalty", double(req.repetition_penalty));
  if (!req.logit_bias.empty()) {
    json_writer bias; // as OpenAI's API: token ids (decimal strings) as keys
    for (const logit_bias_entry& e : req.logit_bias)
      bias.field(std::to_string(e.token), double(e.bias));
    w.object("logit_bias", bias);
  }
  if (!req.stop_token_ids.empty())
    w.field("stop_token_ids", req.stop_token_ids);
  if (req.min_tokens != 0)
    w.field("min_tokens", req.min_tokens);
  if (!req.add_special_tokens)
    w.field("add_special_tokens", false);
  if (req.return_prompt_tokens)
    w.field("return_token_ids", true);
}

std::string cancel_line(std::string_view id) {
  return json_writer().field("op", "cancel").field("id", id).line();
}

std::string completions_request(std::string_view host, std::string_view body) {
  std::string r = "POST /v1/completions HTTP/1.1\r\nHost: ";
  r += host;
  r += "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ";
  r += std::to_string(body.size());
  r += "\r\n\r\n";
  r += body;
  return r;
}

int http_status(const std::string& status_line) {
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12)
    return 0;
  return std::atoi(status_line.c_str() + 9);
}

std::optional<std::string> next_sse_data(client& c) {
  while (auto line = c.read_line()) {
    if (line->rfind("data: ", 0) != 0)
      continue; // headers, chunk sizes, blank lines
    if (std::string_view(*line).substr(6) == "[DONE]")
      return std::nullopt;
    return line->substr(6);
  }
  return std::nullopt;
}

std::variant<std::unique_ptr<client>, std::string> client::connect(const std::string& host,
                                                                   uint16_t port) {
  std::unique_ptr<client> c(new client());
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(c->io_);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (!ec)
    asio::connect(c->socket_, endpoints, ec);
  if (ec)
    return "cannot connect to " + host + ":" + std::to_string(port) + ": " + ec.message();
  c->socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  return c;
}

bool client::send(std::string_view bytes) {
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), ec);
  return !ec;
}

std::optional<std::string> client::read_line() {
  boost::system::error_code ec;
  const size_t n = asio::read_until(socket_, asio::dynamic_buffer(buffer_), '\n', ec);
  if (ec)
    return std::nullopt;
  std::string line = buffer_.substr(0, n - 1);
  buffer_.erase(0, n);
  return line;
}

std::optional<server_event> client::read_event() {
  auto line = read_line();
  return line ? parse_event(*line) : std::nullopt;
}

void client::set_receive_buffer(int32_t bytes) {
  boost::system::error_code ignored;
  socket_.set_option(asio::socket_base::receive_buffer_size(bytes), ignored);
}

void client::interrupt() {
  // NOTE: the system call, not socket_.shutdown(): an asio socket is not
  // safe to use from two threads at once; the descriptor is.
  ::shutdown(socket_.native_handle(), SHUT_RDWR);
}

void client::close() {
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

} // namespace kvactor::net
