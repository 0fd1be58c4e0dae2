#include "tools/bench/serving/tcp_driver.hpp"

#include "net/client.hpp"
#include "tools/load/arrivals.hpp"
#include "tools/load/request_ids.hpp"

#include <memory>
#include <thread>

namespace kvactor::bench {

namespace {

// Reads one connection's events until its requests ended or it closed.
void read_events(net::client& c, size_t num_requests, size_t num_expected, request_tracker& t) {
  for (size_t num_ended = 0; num_ended < num_expected;) {
    auto ev = c.read_event();
    if (!ev)
      return; // NOTE: the server went away; the run times out on the rest
    const int64_t i = tools::index_of(ev->id, static_cast<int64_t>(num_requests));
    if (i < 0)
      continue;
    const auto index = static_cast<size_t>(i);
    if (ev->event == "accepted") {
      t.accepted(index);
    } else if (ev->event == "token") {
      t.token(index);
    } else if (ev->event == "done") {
      t.done(index, finish_reason_of(ev->finish_reason).value_or(finish_reason::error),
             static_cast<int32_t>(ev->cached_tokens));
      ++num_ended;
    } else if (ev->event == "error") {
      t.refused(index, ev->code + ": " + ev->message);
      ++num_ended;
    }
  }
}

} // namespace

std::optional<std::string> send_over_tcp(const tcp_target& target,
                                         const std::vector<bench_request>& requests,
                                         int32_t concurrency, request_tracker& t) {
  const auto n = static_cast<size_t>(std::max(1, target.num_connections));
  std::vector<std::unique_ptr<net::client>> clients;
  for (size_t k = 0; k < n; ++k) {
    auto c = net::client::connect(target.host, target.port);
    if (auto* err = std::get_if<std::string>(&c))
      return *err;
    clients.push_back(std::move(std::get<std::unique_ptr<net::client>>(c)));
  }
  std::vector<std::thread> readers;
  for (size_t k = 0; k < n; ++k) {
    const size_t expected = requests.size() / n + (k < requests.size() % n ? 1 : 0);
    readers.emplace_back(
      [&, k, expected] { read_events(*clients[k], requests.size(), expected, t); });
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    std::this_thread::sleep_until(t.start() + tools::seconds(requests[i].arrival_s));
    t.wait_for_room(concurrency);
    t.sent(i);
    // NOTE: this thread only writes and the reader only reads the socket.
    if (!clients[i % n]->send(
          net::generate_line(tools::id_of(static_cast<int64_t>(i)), requests[i].request)))
      t.refused(i, "the connection closed");
  }
  for (auto& r : readers)
    r.join();
  return std::nullopt;
}

} // namespace kvactor::bench
