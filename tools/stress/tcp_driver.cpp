#include "tools/stress/tcp_driver.hpp"

#include "net/client.hpp"
#include "tools/load/request_ids.hpp"
#include "tools/stress/server_stats.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>

namespace kvactor::stress {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

const char* const malformed_lines[] = {
  "this is not json\n",
  "{\"op\":\"generate\"}\n",
  "{\"op\":\"teleport\",\"id\":\"junk\"}\n",
  "{\"op\":\"generate\",\"id\":\"junk\",\"max_tokens\":\"many\",\"prompt\":\"x\"}\n",
  "[1,2,3]\n",
  "{\"op\":\"cancel\"\n",
};

using tools::id_of;

// The choice an event names; 0 for a request of one choice.
int32_t choice_of(const net::server_event& ev) {
  return static_cast<int32_t>(std::max<int64_t>(ev.choice, 0));
}

// The request index of an id we sent ("r17" → 17); -1 for any other.
int32_t index_of(const std::string& id, size_t num_requests) {
  return static_cast<int32_t>(tools::index_of(id, static_cast<int64_t>(num_requests)));
}

// One connection: the requests it carries, the client it currently uses. Its
// writer thread sends the requests at their arrival times and the cancels
// that jitter delays; its reader thread reads the events, answers them with
// cancels and drops the connection at the planned tokens.
class connection {
public:
  connection(const tcp_options& options, std::vector<const stress_request*> requests,
             const std::vector<request_faults>& plan, record_book& book, size_t num_requests)
    : options_(options), requests_(std::move(requests)), plan_(plan), book_(book),
      num_requests_(num_requests) {}

  std::optional<std::string> open() {
    auto c = net::client::connect(options_.host, options_.port);
    if (auto* err = std::get_if<std::string>(&c))
      return *err;
    client_ = std::move(std::get<std::unique_ptr<net::client>>(c));
    reader_client_ = client_.get();
    return std::nullopt;
  }

  void run(clock::time_point start) {
    std::thread reader([this] {
      read();
      std::lock_guard lock(mutex_);
      reader_done_ = true;
      wake_.notify_all();
    });
    write(start);
    reader.join();
  }

  // Ends both threads: the run is over (stalled or timed out).
  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    if (client_)
      client_->interrupt();
    wake_.notify_all();
  }

  int64_t num_malformed_sent = 0;
  std::atomic<int64_t> num_malformed_answered{0};
  int64_t num_disconnects = 0;

private:
  struct delayed_cancel {
    clock::time_point due;
    std::string line;
    bool operator>(const delayed_cancel& o) const { return due > o.due; }
  };

  bool send(const std::string& line) {
    std::lock_guard lock(mutex_);
    return client_ && client_->send(line);
  }

  void cancel(int32_t index) {
    std::lock_guard lock(mutex_);
    cancel_locked(index);
  }

  // Sends a cancel now, or has the writer send it after the plan's jitter
  // delay. Under mutex_.
  void cancel_locked(int32_t index) {
    book_.cancel_sent(index);
    const int32_t delay_ms = plan_[static_cast<size_t>(index)].cancel_delay_ms;
    if (delay_ms > 0) {
      cancels_.push(
        {clock::now() + std::chrono::milliseconds(delay_ms), net::cancel_line(id_of(index))});
      wake_.notify_all();
    } else if (client_) {
      client_->send(net::cancel_line(id_of(index)));
    }
  }

  void write(clock::time_point start) {
    size_t next = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      const auto arrival = next < requests_.size() ? start + seconds(requests_[next]->arrival_s)
                                                   : clock::time_point::max();
      const auto due = std::min(arrival, cancels_.empty() ? clock::time_point::max()
                                                          : cancels_.top().due);
      if (stopped_ || !client_ || (due == clock::time_point::max() && reader_done_))
        return; // NOTE: after a failed reconnect the rest show up as never sent
      if (due == clock::time_point::max())
        wake_.wait(lock);
      else if (clock::now() < due)
        wake_.wait_until(lock, due);
      else if (due == arrival)
        send_request(*requests_[next++]);
      else {
        client_->send(cancels_.top().line);
        cancels_.pop();
      }
    }
  }

  void send_request(const stress_request& r) { // under mutex_
    const request_faults& f = plan_[static_cast<size_t>(r.index)];
    if (f.malformed_before) {
      client_->send(malformed_lines[r.index % std::size(malformed_lines)]);
      ++num_malformed_sent;
    }
    book_.sent(r.index);
    live_.push_back(r.index);
    client_->send(net::generate_line(id_of(r.index), r.request));
    if (f.cancel_at == cancel_at_once)
      cancel_locked(r.index);
  }

  // Drops the connection and opens a new one; the requests still live on the
  // old one are disconnected.
  void reconnect() {
    std::lock_guard lock(mutex_);
    client_->close();
    retired_.push_back(std::move(client_));
    for (int32_t i : live_)
      book_.disconnect(i);
    live_.clear();
    ++num_disconnects;
    if (!stopped_)
      if (auto c = net::client::connect(options_.host, options_.port);
          auto* ok = std::get_if<std::unique_ptr<net::client>>(&c))
        client_ = std::move(*ok);
    reader_client_ = client_.get();
    wake_.notify_all();
  }

  void read() {
    size_t num_resolved = 0;
    while (num_resolved < requests_.size()) {
      net::client* c = nullptr;
      {
        std::lock_guard lock(mutex_);
        if (stopped_)
          return;
        c = reader_client_;
      }
      if (!c)
        return;
      auto line = c->read_line();
      if (!line)
        return; // NOTE: the server went away or the run was stopped; unresolved
                // requests show up as missing
      auto ev = net::parse_event(*line);
      if (!ev)
        continue;
      const int32_t index = index_of(ev->id, num_requests_);
      if (index < 0) {
        if (ev->event == "error")
          ++num_malformed_answered;
        continue;
      }
      const request_faults& f = plan_[static_cast<size_t>(index)];
      if (ev->event == "accepted") {
        book_.accepted(index);
      } else if (ev->event == "token") {
        const auto token_index = static_cast<int32_t>(ev->index);
        book_.token(index, choice_of(*ev), token_index,
                    static_cast<int32_t>(ev->token));
        if (f.cancel_at >= 0 && token_index == f.cancel_at)
          cancel(index);
        if (f.disconnect_at >= 0 && token_index == f.disconnect_at && still_live(index)) {
          reconnect();
          num_resolved = count_resolved();
        }
      } else if (ev->event == "done") {
        done_event d;
        d.finish_reason = finish_reason_of(ev->finish_reason).value_or(finish_reason::error);
        d.tokens = ev->tokens;
        d.completion_tokens = static_cast<int32_t>(ev->completion_tokens);
        d.preemptions = static_cast<int32_t>(ev->preemptions);
        d.choice = choice_of(*ev);
        book_.done(index, d);
        if (book_.resolved(index)) // its last choice
          forget(index);
        if (f.cancel_at >= 0 && f.cancel_at >= d.completion_tokens)
          cancel(index); // after the end: answered with unknown_id
        num_resolved = count_resolved();
      } else if (ev->event == "error") {
        // NOTE: unknown_id answers a cancel that came after the end; it does
        // not end the request.
        if (ev->code == "unknown_id")
          continue;
        if (ev->choice >= 0) // a choice's end without its result (a front lost its worker)
          book_.error(index, choice_of(*ev), ev->code);
        else
          book_.error(index, ev->code);
        if (book_.resolved(index))
          forget(index);
        num_resolved = count_resolved();
      }
    }
  }

  bool still_live(int32_t index) {
    std::lock_guard lock(mutex_);
    return std::find(live_.begin(), live_.end(), index) != live_.end();
  }
  void forget(int32_t index) {
    std::lock_guard lock(mutex_);
    std::erase(live_, index);
  }
  size_t count_resolved() {
    size_t n = 0;
    for (const stress_request* r : requests_)
      n += book_.resolved(r->index) ? 1 : 0;
    return n;
  }

  const tcp_options& options_;
  std::vector<const stress_request*> requests_;
  const std::vector<request_faults>& plan_;
  record_book& book_;
  size_t num_requests_;
  std::mutex mutex_;
  std::condition_variable wake_; // the writer's: a cancel queued, the reader done, stop
  std::unique_ptr<net::client> client_;
  net::client* reader_client_ = nullptr;
  std::vector<std::unique_ptr<net::client>> retired_;
  std::vector<int32_t> live_; // sent on the current client, not ended
  std::priority_queue<delayed_cancel, std::vector<delayed_cancel>, std::greater<>> cancels_;
  bool reader_done_ = false;
  bool stopped_ = false;
};

} // namespace

std::variant<tcp_outcome, std::string> drive_tcp(const std::vector<stress_request>& workload,
                                                 const std::vector<request_faults>& plan,
                                                 const tcp_options& options, record_book& book) {
  const int32_t num_connections = std::max(1, options.num_connections);
  std::vector<std::vector<const stress_request*>> split(static_cast<size_t>(num_connections));
  for (const auto& r : workload)
    split[static_cast<size_t>(r.connection % num_connections)].push_back(&r);
  std::vector<std::unique_ptr<connection>> connections;
  for (auto& requests : split) {
    connections.push_back(
      std::make_unique<connection>(options, std::move(requests), plan, book, workload.size()));
    if (auto err = connections.back()->open())
      return *err;
  }
  const auto start = clock::now();
  std::atomic<int32_t> num_running{num_connections};
  std::vector<std::thread> threads;
  for (auto& c : connections)
    threads.emplace_back([&c, &num_running, &book, start] {
      c->run(start);
      if (--num_running == 0)
        book.abandon(); // nothing more can come
    });
  if (!wait_resolved(book, start, options.timeout_s, options.stall_s))
    for (auto& c : connections)
      c->stop();
  for (auto& t : threads)
    t.join();
  tcp_outcome out;
  for (auto& c : connections) {
    out.num_malformed_sent += c->num_malformed_sent;
    out.num_malformed_answered += c->num_malformed_answered.load();
    out.num_disconnects += c->num_disconnects;
  }
  out.end = stats_when_idle(options.host, options.port);
  return out;
}

} // namespace kvactor::stress
