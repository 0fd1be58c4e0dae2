// server_stats: a line-protocol server's stats line read into the end state
// the checks compare.

#include "tools/stress/server_stats.hpp"

#include "net/client.hpp"

#include <simdjson.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace kvactor::stress {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

} // namespace

std::optional<end_state> parse_stats(std::string_view line) {
  using namespace simdjson;
  ondemand::parser parser;
  padded_string buffer(line);
  ondemand::document doc;
  ondemand::object obj;
  if (parser.iterate(buffer).get(doc) || doc.get_object().get(obj))
    return std::nullopt;
  end_state s;
  bool is_stats = false, invariants_ok = true;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key))
      return std::nullopt;
    int64_t n = 0;
    auto value = field.value();
    if (key == "event") {
      std::string_view v;
      is_stats = !value.get_string().get(v) && v == "stats";
    } else if (key == "invariants_ok") {
      if (value.get_bool().get(invariants_ok))
        return std::nullopt;
    } else if (!value.get_int64().get(n)) {
      const auto v = static_cast<int32_t>(n);
      if (key == "device_blocks_total") s.device_blocks_total = v;
      else if (key == "device_blocks_in_use") s.device_blocks_used = v;
      else if (key == "host_blocks_total") s.host_blocks_total = v;
      else if (key == "host_blocks_free") s.host_blocks_free = v;
      else if (key == "running") s.running = v;
      else if (key == "waiting") s.waiting = v;
      else if (key == "swapped") s.swapped = v;
      else if (key == "preemptions") s.preemptions = n;
      else if (key == "swap_outs_refused") s.swap_outs_refused = n;
    }
  }
  if (!is_stats)
    return std::nullopt;
  if (!invariants_ok)
    s.broken_invariants.push_back("the server's stats say invariants_ok false");
  return s;
}

namespace {

// Interrupts a client's blocking reads at a deadline, unless destroyed first.
class read_deadline {
public:
  read_deadline(net::client& c, clock::time_point at)
    : thread_([this, &c, at] {
        std::unique_lock lock(mutex_);
        if (!cv_.wait_until(lock, at, [this] { return done_; }))
          c.interrupt();
      }) {}
  ~read_deadline() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_; // last: it uses the members above
};

} // namespace

// NOTE: a server that does not answer stats within a few seconds counts as
// not idle.
std::optional<end_state> stats_when_idle(const std::string& host, uint16_t port) {
  auto c = net::client::connect(host, port);
  auto* client = std::get_if<std::unique_ptr<net::client>>(&c);
  if (!client)
    return std::nullopt;
  std::optional<end_state> s;
  const auto deadline = clock::now() + 5s;
  read_deadline interrupt(**client, deadline + 1s);
  do {
    if (!(*client)->send("{\"op\":\"stats\"}\n"))
      return std::nullopt;
    auto line = (*client)->read_line();
    if (!line)
      return std::nullopt;
    s = parse_stats(*line);
    if (s && s->device_blocks_used == 0 && s->host_blocks_free == s->host_blocks_total &&
        s->running + s->waiting + s->swapped == 0)
      break;
    std::this_thread::sleep_for(10ms);
  } while (clock::now() < deadline);
  return s;
}

} // namespace kvactor::stress
