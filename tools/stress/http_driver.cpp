#include "tools/stress/http_driver.hpp"

#include "net/client.hpp"
#include "net/openai_request.hpp"
#include "net/json_writer.hpp"

#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace kvactor::stress {

namespace {

using clock = std::chrono::steady_clock;

std::string http_request(std::string_view body) {
  return net::completions_request("kvactor", body);
}

// Requests the server must answer with a 4xx.
const std::string malformed_requests[] = {
  http_request(R"({"prompt")"),                       // bad JSON
  http_request(R"({"prompt":[1],"temperature":9})"), // a field out of range
  "GET /v1/nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  "GET /health HTTP/1.1\r\nA header without a colon\r\n\r\n", // not HTTP
};

// Every open connection, so that a stalled run can interrupt their reads.
class registry {
public:
  void add(net::client* c) {
    std::lock_guard lock(mutex_);
    if (stopped_)
      c->interrupt();
    live_.push_back(c);
  }
  void remove(net::client* c) {
    std::lock_guard lock(mutex_);
    std::erase(live_, c);
  }
  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    for (auto* c : live_)
      c->interrupt();
  }

private:
  std::mutex mutex_;
  std::vector<net::client*> live_;
  bool stopped_ = false;
};

class driver {
public:
  driver(const http_options& options, const std::vector<request_faults>& plan, record_book& book)
    : options_(options), plan_(plan), book_(book) {}

  std::atomic<int64_t> num_malformed_sent{0}, num_malformed_answered{0}, num_closed{0};
  registry open;

  // One request from sending to its end (or its planned close).
  void run(const stress_request& r) {
    const request_faults& f = plan_[static_cast<size_t>(r.index)];
    if (f.malformed_before)
      malformed(r.index);
    auto c = connect();
    book_.sent(r.index);
    if (!c || !c->send(http_request(completion_body(r.request)))) {
      book_.error(r.index, "connect");
      return finish(c.get());
    }
    if (f.cancel_at == cancel_at_once)
      return close(*c, r.index, true, f.cancel_delay_ms);
    auto status = c->read_line();
    if (!status || net::http_status(*status) != 200) {
      book_.error(r.index,
                  status ? "http_" + std::to_string(net::http_status(*status)) : "no_response");
      return finish(c.get());
    }
    book_.accepted(r.index);
    simdjson::dom::parser parser;
    // Each choice's tokens so far; a fault comes at the first to reach its place.
    std::vector<std::vector<int32_t>> tokens(static_cast<size_t>(r.request.n));
    while (auto data = net::next_sse_data(*c)) {
      simdjson::dom::element choice;
      if (parser.parse(*data)["choices"].at(0).get(choice))
        continue; // the usage event
      const auto index = static_cast<int32_t>(int64_t(choice["index"]));
      auto& mine = tokens.at(static_cast<size_t>(index));
      for (int64_t id : simdjson::dom::array(choice["token_ids"])) {
        const auto num_tokens = static_cast<int32_t>(mine.size());
        book_.token(r.index, index, num_tokens, static_cast<int32_t>(id));
        mine.push_back(static_cast<int32_t>(id));
        if (num_tokens == f.cancel_at || num_tokens == f.disconnect_at)
          return close(*c, r.index, num_tokens == f.cancel_at, f.cancel_delay_ms);
      }
      std::string_view reason;
      if (!choice["finish_reason"].get(reason)) {
        done_event d;
        d.finish_reason = net::finish_reason_of_openai(reason); // the checker compares the tokens
        d.tokens = mine;
        d.completion_tokens = static_cast<int32_t>(mine.size());
        d.choice = index;
        book_.done(r.index, d);
      }
    }
    finish(c.get());
  }

private:
  std::unique_ptr<net::client> connect() {
    auto c = net::client::connect(options_.host, options_.port);
    auto* ok = std::get_if<std::unique_ptr<net::client>>(&c);
    if (!ok)
      return nullptr;
    open.add(ok->get());
    return std::move(*ok);
  }

  void finish(net::client* c) {
    if (c)
      open.remove(c);
  }

  // Cancels (or drops) the request by closing its connection, after the
  // plan's jitter delay.
  void close(net::client& c, int32_t index, bool cancel, int32_t delay_ms) {
    if (cancel)
      book_.cancel_sent(index);
    book_.disconnect(index);
    if (delay_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    open.remove(&c);
    c.close();
    ++num_closed;
  }

  void malformed(int32_t index) {
    auto c = connect();
    if (!c)
      return;
    ++num_malformed_sent;
    c->send(malformed_requests[static_cast<size_t>(index) % std::size(malformed_requests)]);
    if (auto line = c->read_line();
        line && net::http_status(*line) >= 400 && net::http_status(*line) < 500)
      ++num_malformed_answered;
    finish(c.get());
  }

  const http_options& options_;
  const std::vector<request_faults>& plan_;
  record_book& book_;
};

} // namespace

std::string completion_body(const generate_request& r) {
  net::json_writer w;
  w.field("prompt", r.prompt_tokens);
  net::write_generation_fields(w, r);
  return w.field("stream", true).field("return_token_ids", true).str();
}

http_outcome drive_http(const std::vector<stress_request>& workload,
                        const std::vector<request_faults>& plan, const http_options& options,
                        record_book& book) {
  driver d(options, plan, book);
  const auto start = clock::now();
  std::atomic<bool> stopped{false};
  // A thread per request in flight; the sender joins the ended ones as it goes.
  struct flight {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> ended;
  };
  std::vector<flight> flights;
  std::thread sender([&] {
    for (const auto& r : workload) {
      std::this_thread::sleep_until(start + seconds(r.arrival_s));
      if (stopped)
        return; // NOTE: the rest show up as never sent
      std::erase_if(flights, [](flight& f) {
        if (!*f.ended)
          return false;
        f.thread.join();
        return true;
      });
      auto ended = std::make_shared<std::atomic<bool>>(false);
      flights.push_back({std::thread([&d, &r, ended] {
                           d.run(r);
                           *ended = true;
                         }),
                         ended});
    }
  });
  if (!wait_resolved(book, start, options.timeout_s, options.stall_s)) {
    stopped = true;
    d.open.stop();
  }
  sender.join();
  for (auto& f : flights)
    f.thread.join();
  return {d.num_malformed_sent.load(), d.num_malformed_answered.load(), d.num_closed.load()};
}

} // namespace kvactor::stress
