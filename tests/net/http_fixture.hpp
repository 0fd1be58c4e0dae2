#pragma once
// The HTTP front over real loopback sockets, in front of the actors and a
// stand-in model (tests/actors/test_runner.hpp): a blocking client and the
// fixture of http_server_test and http_choices_test.

#include "net/http_session.hpp"
#include "net/json_writer.hpp"
#include "test_runtime.hpp"

#include <boost/beast/http.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <thread>

namespace kvactor::net::testing {

using namespace std::chrono_literals;

namespace asio = boost::asio;
namespace http = boost::beast::http;
using response = http::response<http::string_body>;

// A blocking HTTP/1.1 client on one connection.
class http_client {
public:
  explicit http_client(uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
  }

  void send_raw(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }

  void send(http::verb method, const std::string& target, const std::string& body = {}) {
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(socket_, req);
  }

  // The next response, chunked bodies joined; nullopt when the server closed.
  std::optional<response> read() {
    response res;
    boost::system::error_code ec;
    http::read(socket_, buffer_, res, ec);
    if (ec)
      return std::nullopt;
    return res;
  }

  response post(const std::string& target, const std::string& body) {
    send(http::verb::post, target, body);
    auto res = read();
    EXPECT_TRUE(res.has_value()) << body;
    return res.value_or(response{});
  }
  response get(const std::string& target) {
    send(http::verb::get, target);
    auto res = read();
    EXPECT_TRUE(res.has_value()) << target;
    return res.value_or(response{});
  }

  // Reads raw bytes until `what` has arrived.
  std::string read_until(const std::string& what) {
    std::string got;
    char chunk[4096];
    while (got.find(what) == std::string::npos) {
      boost::system::error_code ec;
      const size_t n = socket_.read_some(asio::buffer(chunk), ec);
      if (ec)
        break;
      got.append(chunk, n);
    }
    return got;
  }

  bool closed_by_server() {
    char c;
    boost::system::error_code ec;
    socket_.read_some(asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

  void close() { socket_.close(); }

private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

class http_server_test : public ::testing::Test {
protected:
  void start(int32_t device_blocks = 256, int32_t max_waiting = 1024, http_options options = {},
             std::shared_ptr<connection_limit> limit = {}) {
    rt_ = std::make_unique<test_runtime>(sys_, device_blocks, max_waiting);
    front_ = std::make_shared<http_front>(sys_, rt_->runtime, "tiny", options);
    server_ = serve_on_loopback(http_protocol(front_), std::move(limit));
    port_ = server_->port();
  }

  void TearDown() override {
    if (server_)
      stop_serving(*server_, sys_, rt_->runtime);
  }

  runtime_figures figures() {
    runtime_figures f;
    caf::scoped_actor self{sys_};
    self->request(rt_->runtime, caf::infinite, figures_atom::value)
      .receive([&](const runtime_figures& x) { f = x; }, [](const caf::error&) {});
    return f;
  }

  // Polls until no request is live and no block is held.
  runtime_figures idle_figures() {
    runtime_figures f;
    for (int i = 0; i < 500; ++i) {
      f = figures();
      if (f.running + f.waiting + f.swapped == 0 && f.device_blocks_used == 0)
        break;
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(f.running + f.waiting + f.swapped, 0);
    EXPECT_EQ(f.device_blocks_used, 0);
    EXPECT_TRUE(f.broken_invariants.empty());
    return f;
  }

  // The text the stand-in model generates after a prompt of token ids, as
  // JSON carries it (invalid UTF-8 as U+FFFD).
  std::string expected_text(std::vector<int32_t> prompt, int32_t n, uint64_t seed = 1) {
    const auto out = test_runtime::expected_output(std::move(prompt), n, seed);
    simdjson::dom::parser p;
    return std::string(
      std::string_view(p.parse(json_writer().field("t", rt_->tokenizer->decode(out)).str())["t"]));
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  std::unique_ptr<test_runtime> rt_;
  std::shared_ptr<http_front> front_;
  std::unique_ptr<server> server_;
  uint16_t port_ = 0;
};

} // namespace kvactor::net::testing
