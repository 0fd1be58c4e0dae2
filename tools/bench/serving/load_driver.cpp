#include "tools/bench/serving/load_driver.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace kvactor::bench {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// What the sinks write and the sender waits on.
class tracker {
public:
  tracker(size_t n, clock::time_point start) : timings_(n), start_(start) {}

  double now_s() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

  void token(size_t i) {
    const double t = now_s();
    std::lock_guard lock(mutex_);
    request_timing& r = timings_[i];
    if (r.num_tokens++ == 0)
      r.first_token_s = t;
    else
      r.token_gaps_s.push_back(t - r.end_s);
    r.end_s = t; // the last token's time until the end
  }

  void done(size_t i, const done_event& d) {
    const double t = now_s();
    std::lock_guard lock(mutex_);
    request_timing& r = timings_[i];
    r.end_s = t;
    r.cached_tokens = d.cached_tokens;
    if (d.finish_reason != "max_tokens" && d.finish_reason != "eos")
      r.error = "ended as " + d.finish_reason;
    end_one();
  }

  void sent(size_t i, double t) {
    std::unique_lock lock(mutex_);
    timings_[i].sent_s = t;
    ++in_flight_;
  }

  void accepted(size_t i) {
    std::lock_guard lock(mutex_);
    timings_[i].accepted = true;
  }

  void refused(size_t i, std::string why) {
    std::lock_guard lock(mutex_);
    timings_[i].error = std::move(why);
    end_one();
  }

  // Waits until fewer than `limit` requests are in flight (0: no limit).
  void wait_for_room(int32_t limit) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return limit <= 0 || in_flight_ < limit; });
  }

  bool wait_all(size_t n, clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return cv_.wait_until(lock, deadline, [&] { return num_ended_ == n; });
  }

  std::vector<request_timing> take() {
    std::lock_guard lock(mutex_);
    return std::move(timings_);
  }

private:
  void end_one() {
    --in_flight_;
    ++num_ended_;
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<request_timing> timings_;
  clock::time_point start_;
  int32_t in_flight_ = 0;
  size_t num_ended_ = 0;
};

// NOTE: the tracker is not the first parameter: CAF takes a leading pointer for `self`.
sink_actor::behavior_type sink_fn(size_t index, std::shared_ptr<tracker> t) {
  return {
    [=](const token_event&) { t->token(index); },
    [=](const done_event& d) { t->done(index, d); },
  };
}

std::optional<runtime_figures> figures_of(caf::actor_system& sys, runtime_actor runtime) {
  std::optional<runtime_figures> out;
  caf::scoped_actor self{sys};
  self->request(runtime, 10s, figures_atom::value)
    .receive([&](const runtime_figures& f) { out = f; }, [](const caf::error&) {});
  return out;
}

// Polls the figures until stopped.
class sampler {
public:
  sampler(caf::actor_system& sys, runtime_actor runtime, const tracker& t,
          std::chrono::milliseconds every)
    : thread_([&sys, runtime, &t, every, this] {
        while (!stop_.load()) {
          if (auto f = figures_of(sys, runtime))
            samples_.push_back({t.now_s(), f->running, f->kv_utilisation, f->device_blocks_used});
          std::this_thread::sleep_for(every);
        }
      }) {}
  std::vector<figure_sample> stop() {
    stop_ = true;
    thread_.join();
    return std::move(samples_);
  }

private:
  std::atomic<bool> stop_{false};
  std::vector<figure_sample> samples_;
  std::thread thread_;
};

} // namespace

std::optional<load_result> run_load(caf::actor_system& sys, runtime_actor runtime,
                                    const std::vector<bench_request>& requests,
                                    const load_options& options, std::string& error) {
  const auto start = clock::now();
  auto t = std::make_shared<tracker>(requests.size(), start);
  sampler figures(sys, runtime, *t, options.sample_every);
  {
    caf::scoped_actor self{sys};
    for (size_t i = 0; i < requests.size(); ++i) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<clock::duration>(
                                              std::chrono::duration<double>(requests[i].arrival_s)));
      t->wait_for_room(options.concurrency);
      auto sink = sys.spawn(sink_fn, i, t);
      t->sent(i, t->now_s());
      self->request(runtime, caf::infinite, generate_atom::value, requests[i].request,
                    sink_actor{sink})
        .receive(
          [&](const admission& a) {
            if (a.ok())
              t->accepted(i);
            else
              t->refused(i, a.error_code + ": " + a.error_message);
          },
          [&](const caf::error& e) { t->refused(i, sys.render(e)); });
    }
  }
  const bool all_ended = t->wait_all(requests.size(),
                                     start + std::chrono::duration_cast<clock::duration>(
                                               std::chrono::duration<double>(options.timeout_s)));
  load_result r;
  r.samples = figures.stop();
  if (!all_ended) {
    error = "not every request ended within " + std::to_string(options.timeout_s) + " s";
    return std::nullopt;
  }
  r.requests = t->take();
  for (const auto& q : r.requests)
    r.wall_s = std::max(r.wall_s, q.end_s);
  auto f = figures_of(sys, runtime);
  if (!f) {
    error = "the runtime did not report its figures";
    return std::nullopt;
  }
  r.end = *f;
  return r;
}

} // namespace kvactor::bench
